"""The ``elevated`` presets (three camera heights) and the absence surfaces every preset now records.

One ``elevated_micro`` generation per session (6 episodes at three heights, ~30 s on two cores) is shared by
the level tests; the absence-surface tests use the session's ``tiny`` dataset.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from aiv_dataset.levels import level_from_tag
from aiv_dataset.privileged_truth import PrivilegedTruth
from aiv_studies.oracle_audit import observable
from aiv_synth.episode import level_height
from aiv_synth.pipeline import GenerationReport, generate, generate_atomic
from aiv_synth.presets import get_preset
from aiv_verifier.core.types import Attribute, Decision
from aiv_verifier.verification.base import PrivilegedViewInfo, ViewInput
from aiv_verifier.verification.oracle import OracleVerifier

IMAGE = np.zeros((8, 8, 3), dtype=np.uint8)

#: SHA-256 over (path, file digest) of every file of the ``micro`` preset (seed 42) but the privileged ground
#: truth, as generated before height levels and absence surfaces existed (commit bea2222).
MICRO_DIGEST_BEFORE_LEVELS = "c5ee426dc61398a5d211267d30a829f153102a98d3d3dcb905e1e64a6d2e2cda"


def _digest(root: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and not rel.startswith("privileged_gt/") and rel != "capture_complete.json":
            h.update(rel.encode())
            h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


@pytest.fixture(scope="session")
def elevated_generation(tmp_path_factory: pytest.TempPathFactory) -> GenerationReport:
    out = tmp_path_factory.mktemp("elevated") / "pv_dataset"
    return generate_atomic(get_preset("elevated_micro"), out, seed=42, workers=2, log=lambda _: None)


def _metas(root: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(root.glob("pin_capture/*/*/*/meta.json"))]


def _truths(root: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(root.glob("privileged_gt/*/*.json"))]


def test_default_presets_images_meta_and_indices_are_byte_identical_to_before(tmp_path: Path) -> None:
    """Levels, the elevated catalogue and absence surfaces must not move a byte of a one-level preset."""
    generate(get_preset("micro"), tmp_path / "micro", seed=42, workers=1, log=lambda _: None)
    assert _digest(tmp_path / "micro") == MICRO_DIGEST_BEFORE_LEVELS


def test_elevated_dataset_validates(elevated_generation: GenerationReport) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "aiv_dataset.cli", "validate", str(elevated_generation.root)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 problem(s)" in result.stdout


def test_every_view_has_three_levels_pitched_at_the_object(elevated_generation: GenerationReport) -> None:
    for meta in _metas(elevated_generation.root):
        goal = meta["goal_position_nominal"]
        slots = {(v["sector_index"], v["range_label"], v["height_level"]) for v in meta["viewpoints"]}
        assert len(slots) == len(meta["viewpoints"]) == 36
        for view in meta["viewpoints"]:
            level = view["height_level"]
            assert (level_from_tag(view["tag"]) or 0) == level
            assert view["camera_height_m"] == pytest.approx(level_height(level, view["range_label"]))
            if view["navigable"] and level != 0:
                x, y, z = view["camera_position"]
                elevation = np.degrees(np.arctan2(goal[1] - y, np.hypot(goal[0] - x, goal[2] - z)))
                assert view["camera_pitch_deg"] == pytest.approx(elevation, abs=0.05)
                assert view["rgb"] == f"rgb/rgb_{view['tag']}.png"
                assert (elevated_generation.root / meta_dir(meta) / view["rgb"]).is_file()
        # The success criteria still count the eye-level ring only.
        eye = [v for v in meta["viewpoints"] if v["height_level"] == 0]
        assert meta["navigable_count"] == sum(v["navigable"] for v in eye)


def meta_dir(meta: dict) -> str:
    return f"pin_capture/val/{meta['scene_key']}/{meta['episode_id']}"


def test_some_heights_are_blocked_and_recorded_unreachable(elevated_generation: GenerationReport) -> None:
    failures = [
        (v["height_level"], v.get("failure"))
        for meta in _metas(elevated_generation.root)
        for v in meta["viewpoints"]
        if not v["navigable"]
    ]
    assert any(failure == "blocked_by_support" for _, failure in failures), failures
    assert all(v in ("no_base_position", "blocked_by_support") for level, v in failures if level != 0)


def test_eye_level_hidden_attributes_are_recorded_and_truly_unseen_at_eye_level(
    elevated_generation: GenerationReport,
) -> None:
    hidden_any = 0
    for truth in _truths(elevated_generation.root):
        for episode_path, record in truth.get("levels_by_episode", {}).items():
            captures = truth["captures"][episode_path]
            for name in record["eye_level_hidden"]:
                hidden_any += 1
                eye = [c for tag, c in captures.items() if level_from_tag(tag) is None]
                assert not any(c["mask_meets_threshold"] and name in c["visible"] for c in eye)
                others = [c for tag, c in captures.items() if level_from_tag(tag) is not None]
                assert any(c["mask_meets_threshold"] and name in c["visible"] for c in others)
    assert hidden_any > 0
    stats = json.loads((elevated_generation.root / "capture_stats.json").read_text())["splits"]["val"]
    assert set(stats["levels"]) == {"-1", "0", "1"}
    assert stats["positives_with_eye_level_hidden"]["with_hidden"] >= 1


def test_elevated_catalogue_is_only_in_the_elevated_presets(
    elevated_generation: GenerationReport, tiny_root: Path
) -> None:
    names = {a["name"] for t in _truths(elevated_generation.root) for a in t["attributes"]}
    assert "contents_color" in names  # the open tote's contents
    assert all(a["name"] != "contents_color" for t in _truths(tiny_root) for a in t["attributes"])
    descriptions = json.loads((elevated_generation.root / "object_descriptions.json").read_text())
    assert any("inside the open top" in texts[0] for texts in descriptions.values())


# ---- absence surfaces (every preset) --------------------------------------------------------------------


def _surface_case(root: Path) -> tuple[dict, str, str, str]:
    """(truth document, episode path, capture tag, attribute): an absent print whose place a clear capture shows."""
    for truth in _truths(root):
        surfaced = [a["name"] for a in truth["absent_attributes"] if "surface" in a and a["phrase"]]
        for episode_path, captures in truth["captures"].items():
            for tag, capture in captures.items():
                for name in surfaced:
                    if capture["mask_meets_threshold"] and name in capture["absent_in_view"]:
                        return truth, episode_path, tag, name
    pytest.skip("no absent print in view in this dataset")


def test_absent_prints_record_their_surface_and_the_captures_that_show_it(tiny_root: Path) -> None:
    truth, episode_path, tag, name = _surface_case(tiny_root)
    (record,) = [a for a in truth["absent_attributes"] if a["name"] == name]
    assert record["surface"]["region"] == f"decal:{name}"
    assert record["surface"]["part"] and record["surface"]["face"]
    capture = truth["captures"][episode_path][tag]
    assert capture["absence_pixels"][name] >= 30


def test_oracle_confirms_an_absence_claim_where_its_surface_is_in_view(tiny_root: Path) -> None:
    """Before absence surfaces the exact oracle answered every "no logo ..." claim Unsure."""
    truth_doc, episode_path, tag, name = _surface_case(tiny_root)
    library = PrivilegedTruth(tiny_root)
    truth = library.instance(truth_doc["object_id"])
    slot = truth.slots[name]
    oracle = OracleVerifier.for_dataset(tiny_root)
    from aiv_dataset import PInVerifyDataset

    descriptions = PInVerifyDataset(tiny_root).load_descriptions().descriptions_for(truth.object_id)
    item = Attribute(name, "logo_text", 1, slot.phrase)

    def ask(capture_tag: str) -> Decision:
        view = ViewInput(
            IMAGE,
            IMAGE,
            None,
            1.0,
            truth.category,
            descriptions,
            "k",
            0,
            PrivilegedViewInfo(episode_path, capture_tag, truth.object_id, True),
        )
        return oracle.verify(view, [item])[0].answer

    assert ask(tag) is Decision.YES
    assert observable(name, truth, truth, truth.capture(episode_path, tag))
    hidden = [
        t
        for t, c in truth.captures[episode_path].items()
        if c["mask_meets_threshold"] and name not in c["absent_in_view"]
    ]
    for other in hidden:
        assert ask(other) is Decision.UNSURE
        assert not observable(name, truth, truth, truth.capture(episode_path, other))
