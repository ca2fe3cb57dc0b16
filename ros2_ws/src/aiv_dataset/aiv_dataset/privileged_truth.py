"""The one reader of a synthetic dataset's privileged ground truth: ``privileged_gt/<split>/<object_id>.json``.

aiv-capture writes one file per instance: every attribute slot of its category and subtype (the present ones
with value and phrase, the absent ones with the phrase a description uses for their absence), the catalogue
order of the slots and, per episode and capture, which attributes the view shows and whether the object is
shown clearly. Two consumers read it: the oracle verifiers (which answer from it) and the oracle audit (which
re-derives independently what each answer should have been). They may judge differently, but they must see the
same file the same way (the same slots, the same description wording, the same refusals of an older file), so
the reading lives here, in the format package, and neither of them keeps its own.

Privileged: for oracle studies and diagnostics; a verifier that answers from pixels never reads it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from .errors import DatasetError

#: Directory of the per-instance ground-truth files inside a dataset written by aiv-capture.
PRIVILEGED_GT_DIR = "privileged_gt"
#: Recipe value of an attribute slot the instance does not have.
ABSENT = "none"
#: Fields aiv-capture 1.1 added; a file without them cannot say which slots an instance lacks.
REQUIRED_SINCE_1_1 = ("absent_attributes", "slot_order")


class PrivilegedTruthError(DatasetError):
    """A dataset without privileged ground truth, or a ground-truth file that cannot be used (the text names
    the directory or file and what is wrong)."""


def strip_article(text: str) -> str:
    words = " ".join(text.split())
    first, _, rest = words.partition(" ")
    return rest if rest and first.lower() in ("a", "an", "the") else words


def description_mention(name: str, value: str, phrase: str, main_colour: str | None) -> str:
    """How the specific description words a present attribute.

    The main colour is written into the head noun phrase ("a cream mug"), so only its value appears; every other
    attribute appears as its phrase without the article.
    """
    return value if name == main_colour else strip_article(phrase)


@dataclass(frozen=True)
class TruthSlot:
    """One attribute slot of an instance, present or absent (``value`` :data:`ABSENT`).

    ``phrase``: the ground-truth phrase of a present attribute, the absence phrase of an absent optional one
    ("no logo on the back"), empty for an absent slot that is not optional. ``mention``: how the specific
    description states it (:func:`description_mention`; the absence phrase; empty when no description does).
    """

    name: str
    value: str
    phrase: str
    parts: frozenset[str]
    view_dependent: bool = False
    mention: str = ""
    type: str = ""
    optional: bool = True
    #: Where an absent logo or print would be (aiv-capture 1.2 ground truth): {"part", "face", "region"};
    #: each capture then lists in ``absent_in_view`` whether it shows that place. None otherwise.
    surface: Mapping[str, str] | None = None

    @property
    def present(self) -> bool:
        return self.value != ABSENT

    @property
    def absence_locatable(self) -> bool:
        """Whether a capture can show that an instance lacks it through a part it shares with another
        attribute: the part says where the attribute would be, but not which face of it a view-dependent
        attribute sits on, nor where on it an absent decal would be printed (see :attr:`surface` for that)."""
        return not self.view_dependent and not any(part.startswith("decal:") for part in self.parts)

    @property
    def has_surface(self) -> bool:
        """Whether the ground truth records the absence surface (so captures say when it is in view)."""
        return not self.present and self.surface is not None


@dataclass(frozen=True)
class InstanceTruth:
    """The ground truth of one synthetic instance: its slots in catalogue order and its captures."""

    object_id: str
    category: str
    slots: Mapping[str, TruthSlot]
    #: episode path -> capture tag -> {"visible": [attribute names], "mask_meets_threshold": bool, ...}
    captures: Mapping[str, Mapping[str, Mapping[str, Any]]]
    subtype: str = "default"
    #: Per episode of a dataset with height levels: ``visible_by_level`` ({level: [names]}) and
    #: ``eye_level_hidden`` (attributes seen clearly from another height only); empty for one-level data.
    levels_by_episode: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    @cached_property
    def attributes(self) -> Mapping[str, TruthSlot]:
        """The attributes the instance has, catalogue order."""
        return {name: slot for name, slot in self.slots.items() if slot.present}

    @cached_property
    def absent(self) -> Mapping[str, TruthSlot]:
        """The optional attributes it lacks: the absences a description can state ("no pattern")."""
        return {name: slot for name, slot in self.slots.items() if not slot.present and slot.optional}

    def capture(self, episode_path: str, capture_tag: str) -> Mapping[str, Any] | None:
        return self.captures.get(episode_path, {}).get(capture_tag)

    def absence_shown(self, name: str, capture: Mapping[str, Any]) -> bool:
        """Whether ``capture`` (of this instance) shows that it lacks attribute ``name``.

        Through the recorded absence surface of an absent logo or print where the ground truth has one (the
        capture's ``absent_in_view``), else through another visible attribute that shares a part with it,
        for a slot that is neither view-dependent nor a decal.
        """
        slot = self.slots.get(name)
        if slot is None or slot.present:
            return False
        if slot.has_surface:
            return name in capture.get("absent_in_view", ())
        if not slot.absence_locatable:
            return False
        visible = frozenset(capture.get("visible", ()))
        return any(other.name in visible and other.parts & slot.parts for other in self.attributes.values())

    def eye_level_hidden(self, episode_path: str) -> tuple[str, ...]:
        """Attributes of the episode that some other height shows and no eye-level view does."""
        return tuple(self.levels_by_episode.get(episode_path, {}).get("eye_level_hidden", ()))


def instance_from_document(doc: Mapping[str, Any], path: str | Path = "<ground truth>") -> InstanceTruth:
    """One ground-truth document as an :class:`InstanceTruth`; PrivilegedTruthError naming ``path`` when it
    lacks what the oracles need (a file from aiv-capture before 1.1) or is malformed."""
    missing = [key for key in REQUIRED_SINCE_1_1 if key not in doc]
    if missing:
        raise PrivilegedTruthError(
            f"no {' / '.join(missing)} (written by an older aiv-capture); regenerate the dataset with aiv-capture",
            path=path,
        )
    try:
        present = {str(item["name"]): item for item in doc["attributes"]}
        absent = {str(item["name"]): item for item in doc["absent_attributes"]}
        main_colour = next((name for name, item in present.items() if item["type"] == "color"), None)
        names = [str(name) for name in doc["slot_order"]]
        order = names + [name for name in present if name not in frozenset(names)]
        slots: dict[str, TruthSlot] = {}
        for name in order:
            if name in present:
                item = present[name]
                value, phrase = str(item["value"]), str(item["phrase"])
                mention = description_mention(name, value, phrase, main_colour)
                optional = True
            elif name in absent:
                item = absent[name]
                value, optional = ABSENT, bool(item["optional"])
                phrase = str(item["phrase"]) if optional else ""
                mention = phrase
            else:
                raise PrivilegedTruthError(
                    f"slot {name!r} of slot_order is neither in attributes nor in absent_attributes",
                    path=path,
                )
            slots[name] = TruthSlot(
                name=name,
                value=value,
                phrase=phrase,
                parts=frozenset(item.get("parts", ())),
                view_dependent=bool(item.get("view_dependent", False)),
                mention=mention,
                type=str(item["type"]),
                optional=optional,
                surface=item.get("surface") if name in absent else None,
            )
        return InstanceTruth(
            object_id=str(doc["object_id"]),
            category=str(doc["object_category"]),
            slots=slots,
            captures=doc.get("captures", {}),
            subtype=str(doc.get("subtype", "default")),
            levels_by_episode=doc.get("levels_by_episode", {}),
        )
    except (KeyError, TypeError, AttributeError) as error:
        raise PrivilegedTruthError(
            f"malformed ground truth ({type(error).__name__}: {error})", path=path
        ) from error


def _normalised(descriptions: Sequence[str]) -> tuple[str, ...]:
    return tuple(" ".join(text.split()) for text in descriptions)


class PrivilegedTruth:
    """The privileged ground truth of one dataset: each instance read once, on first use, then kept; and the
    query object a set of descriptions belongs to (the oracle verifier is never told the query id)."""

    def __init__(self, dataset_root: str | Path) -> None:
        self.root = Path(dataset_root)
        directory = self.root / PRIVILEGED_GT_DIR
        if not directory.is_dir():
            raise PrivilegedTruthError(
                "does not exist: no privileged ground truth (a synthetic dataset written by aiv-capture has it)",
                path=directory,
            )
        self._paths = {path.stem: path for path in sorted(directory.glob("*/*.json"))}
        if not self._paths:
            raise PrivilegedTruthError("holds no <split>/<object_id>.json ground-truth file", path=directory)
        self._cache: dict[str, InstanceTruth] = {}
        self._by_descriptions: dict[tuple[str, ...], str] | None = None

    @property
    def object_ids(self) -> tuple[str, ...]:
        return tuple(self._paths)

    def find(self, object_id: str) -> InstanceTruth | None:
        """The instance's ground truth, None when the dataset has no file for it."""
        if object_id in self._cache:
            return self._cache[object_id]
        path = self._paths.get(object_id)
        if path is None:
            return None
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise PrivilegedTruthError(f"cannot read ground truth: {error}", path=path) from error
        if not isinstance(doc, Mapping):
            raise PrivilegedTruthError("ground truth is not a JSON object", path=path)
        truth = instance_from_document(doc, path)
        self._cache[object_id] = truth
        return truth

    def instance(self, object_id: str) -> InstanceTruth:
        """Like :meth:`find`, for an object that must be there (PrivilegedTruthError when it is not)."""
        truth = self.find(object_id)
        if truth is None:
            raise PrivilegedTruthError(
                f"no ground truth for object {object_id!r}", path=self.root / PRIVILEGED_GT_DIR
            )
        return truth

    def load_description_index(self) -> None:
        """Read the description db now (the oracle does at construction, to refuse a dataset without one)."""
        if self._by_descriptions is not None:
            return
        from .layout import PInVerifyDataset

        db = PInVerifyDataset(self.root).load_descriptions()
        if db is None:
            raise PrivilegedTruthError("no description db", path=self.root)
        index: dict[tuple[str, ...], str] = {}
        for object_id in db:
            index.setdefault(_normalised(db.descriptions_for(object_id)), object_id)
        self._by_descriptions = index

    def query_object_id(self, descriptions: Sequence[str]) -> str | None:
        """The object whose description set is ``descriptions`` (whitespace-normalised), None when none is."""
        self.load_description_index()
        assert self._by_descriptions is not None
        return self._by_descriptions.get(_normalised(descriptions))
