"""Named dataset sizes, from a test-sized one to one with the benchmark's validation-split scale.

Every preset has a train and a val split with disjoint scenes (different scene-number ranges, as HM3D's
train 00000-00799 / val 00800-00899) and disjoint instances (instances derive from the split name).
Within a split each category gets ``families`` distractor families of ``family_size`` members, and every
instance is the target of ``episodes_per_instance`` episodes spread over the split's scenes.
"""

from __future__ import annotations

from dataclasses import dataclass

from aiv_dataset.vocabulary import CATEGORIES

from .marker import DEFAULT_PRESET, DEFAULT_SEED  # noqa: F401  (re-exported for callers)

#: Scene-number offsets per split (scene keys look like HM3D's "00813-svBbv1Pavdk").
SCENE_OFFSETS: dict[str, int] = {"train": 0, "val": 800}


@dataclass(frozen=True)
class SplitPlan:
    name: str
    categories: tuple[str, ...]
    scenes: int
    families: int
    family_size: int
    episodes_per_instance: int

    @property
    def instances(self) -> int:
        return len(self.categories) * self.families * self.family_size

    @property
    def episodes(self) -> int:
        return self.instances * self.episodes_per_instance


@dataclass(frozen=True)
class Preset:
    name: str
    description: str
    splits: tuple[SplitPlan, ...]
    subset_sizes: tuple[int, ...] = (50, 100, 500, 1000)
    #: Camera height levels captured per sector and range ((0,): eye level only, the benchmark's format).
    levels: tuple[int, ...] = (0,)
    #: Category definitions (:data:`aiv_synth.objects.CATALOGUES`).
    catalogue: str = "standard"

    @property
    def episodes(self) -> int:
        return sum(s.episodes for s in self.splits)


_FEW = ("backpack", "keys", "mug", "teddy bear", "laptop", "watch")

PRESETS: dict[str, Preset] = {
    "micro": Preset(
        "micro",
        "4 val episodes of 2 categories; for determinism tests",
        (
            SplitPlan(
                "val", ("mug", "backpack"), scenes=2, families=1, family_size=2, episodes_per_instance=1
            ),
        ),
        subset_sizes=(6,),
    ),
    "tiny": Preset(
        "tiny",
        "18 episodes (6 categories in val, 3 in train); for tests and smoke runs",
        (
            SplitPlan("train", _FEW[:3], scenes=1, families=1, family_size=2, episodes_per_instance=1),
            SplitPlan("val", _FEW, scenes=3, families=1, family_size=2, episodes_per_instance=1),
        ),
        subset_sizes=(12,),
    ),
    "default": Preset(
        "default",
        "all 18 categories; val 54 instances x 2 episodes in 8 scenes (a few hundred pairs), train 54 x 1 in 6",
        (
            SplitPlan("train", CATEGORIES, scenes=6, families=1, family_size=3, episodes_per_instance=1),
            SplitPlan("val", CATEGORIES, scenes=8, families=1, family_size=3, episodes_per_instance=2),
        ),
        subset_sizes=(50, 100),
    ),
    "elevated": Preset(
        "elevated",
        "default's plan (val 54 x 2 in 8 scenes, train 54 x 1 in 6), every view also from 0.85 m and 1.75 m"
        " pitched at the object; open containers with contents only a raised camera sees",
        (
            SplitPlan("train", CATEGORIES, scenes=6, families=1, family_size=3, episodes_per_instance=1),
            SplitPlan("val", CATEGORIES, scenes=8, families=1, family_size=3, episodes_per_instance=2),
        ),
        subset_sizes=(50, 100),
        levels=(-1, 0, 1),
        catalogue="elevated",
    ),
    "elevated_micro": Preset(
        "elevated_micro",
        "6 val episodes of 3 categories at three camera heights; for tests",
        (
            SplitPlan(
                "val", ("mug", "bag", "keys"), scenes=2, families=1, family_size=2, episodes_per_instance=1
            ),
        ),
        subset_sizes=(6,),
        levels=(-1, 0, 1),
        catalogue="elevated",
    ),
    "elevated_train": Preset(
        "elevated_train",
        "the elevated preset's train split alone (54 episodes, the same as in a full elevated dataset of the"
        " seed); for fitting the visibility rows by level",
        (SplitPlan("train", CATEGORIES, scenes=6, families=1, family_size=3, episodes_per_instance=1),),
        subset_sizes=(50, 100),
        levels=(-1, 0, 1),
        catalogue="elevated",
    ),
    "elevated_small": Preset(
        "elevated_small",
        "36 val episodes (all 18 categories, 2 instances each) at three camera heights; for the share of"
        " positives with an attribute no eye-level view shows",
        (SplitPlan("val", CATEGORIES, scenes=3, families=1, family_size=2, episodes_per_instance=1),),
        subset_sizes=(12,),
        levels=(-1, 0, 1),
        catalogue="elevated",
    ),
    "medium": Preset(
        "medium",
        "val 108 instances x 3 episodes in 20 scenes, train 216 instances x 3 in 40 scenes (~970 episodes)",
        (
            SplitPlan("train", CATEGORIES, scenes=40, families=4, family_size=3, episodes_per_instance=3),
            SplitPlan("val", CATEGORIES, scenes=20, families=2, family_size=3, episodes_per_instance=3),
        ),
    ),
    "large": Preset(
        "large",
        "benchmark-scale val (35 scenes, 72 instances, ~2,500 episodes) and train (145 scenes, 270 instances, 5,400)",
        (
            SplitPlan("train", CATEGORIES, scenes=145, families=5, family_size=3, episodes_per_instance=20),
            SplitPlan("val", CATEGORIES, scenes=35, families=2, family_size=2, episodes_per_instance=35),
        ),
    ),
}


def get_preset(name: str) -> Preset:
    try:
        return PRESETS[name]
    except KeyError:
        raise KeyError(f"unknown preset {name!r}; choose from {', '.join(PRESETS)}") from None
