"""EpisodeRecord: validation, derived fields, canonical serialisation."""

from __future__ import annotations

import dataclasses
import json

import pytest
from aiv_eval import (
    EpisodeRecord,
    RecordError,
    TranscriptStep,
    count_flips,
    derive_flip_direction,
    make_episode_key,
)
from aiv_eval.records.episode import direction_offset

from .builders import index_entry, infra, record, six_episodes, transcript

REFERENCE_FIELDS = [
    "episode_key",
    "episode_index",
    "episode_id",
    "scene_id",
    "object_id",
    "target_object_id",
    "target_object_category",
    "query_object_category",
    "prediction",
    "label",
    "pair_type",
    "query_descriptions",
    "steps",
    "is_correct",
    "nav_failures",
    "nav_fail_unreachable",
    "nav_fail_trap",
    "effective_views",
    "first_view_prediction",
]
EXTRA_FIELDS = [
    "status",
    "failure_reason",
    "attempts",
    "step_predictions",
    "prediction_flips",
    "flip_direction",
    "stop_reason",
    "category",
    "query_mode",
    "model_calls",
    "transcript",
    "run_id",
]


def test_key_order_is_reference_fields_then_extras() -> None:
    rec = six_episodes()[1]
    assert list(rec.to_json_dict()) == REFERENCE_FIELDS + EXTRA_FIELDS
    step = rec.to_json_dict()["transcript"][0]
    assert list(step) == [
        "step",
        "sector",
        "capture_tag",
        "duplicate_view",
        "detection_confidence",
        "decision",
        "step_prediction",
        "nav_rel",
        "nbv_reason",
        "outcome",
        "trap_view",
        "attributes",
        "crop_file",
    ]


@pytest.mark.parametrize(
    "rec", [*six_episodes(), infra(9, index_entry(episode="ep9"))], ids=lambda r: r.episode_key
)
def test_round_trip_is_byte_identical(rec: EpisodeRecord) -> None:
    line = rec.to_json_line()
    again = EpisodeRecord.from_json_line(line)
    assert again == rec
    assert again.to_json_line() == line
    assert line.isascii() and "\n" not in line


def test_floats_are_rounded_so_equal_decisions_serialise_identically() -> None:
    a = record(0, index_entry(), "Yes", ["Yes"], confidence=0.87345678901)
    b = record(0, index_entry(), "Yes", ["Yes"], confidence=0.8734512)
    assert a.transcript[0].detection_confidence == 0.8735
    assert a.to_json_line() == b.to_json_line()
    c = record(0, index_entry(), "Yes", ["Yes"], confidence=1)  # an int becomes the float 1.0
    assert '"detection_confidence":1.0' in c.to_json_line()


def test_model_calls_are_sorted_and_read_only() -> None:
    rec = record(0, index_entry(), "Yes", ["Yes"], model_calls={"verifier": 3, "llm_nbv": 1, "ocr": 2})
    assert list(rec.to_json_dict()["model_calls"]) == ["llm_nbv", "ocr", "verifier"]
    with pytest.raises(TypeError):
        rec.model_calls["verifier"] = 5  # type: ignore[index]


def test_derived_fields_from_the_transcript() -> None:
    rec = six_episodes()[4]  # No,Yes,No,No with already_visited at step 2 and a trap arrival at step 3
    assert rec.episode_key == "s2/ep3/mugA" == make_episode_key("s2", "ep3", "mugA")
    assert (rec.steps, rec.nav_fail_unreachable, rec.nav_fail_trap, rec.nav_failures) == (4, 1, 1, 2)
    assert rec.effective_views == 2
    assert rec.first_view_prediction == "No"
    assert rec.step_predictions == ("No", "Yes", "No", "No")
    assert rec.prediction_flips == 2
    assert rec.flip_direction == "stable_correct"
    assert rec.is_correct is True


def test_flip_helpers() -> None:
    assert count_flips([]) == 0
    assert count_flips(["Yes"]) == 0
    assert count_flips(["Yes", "Yes", "No", "Yes"]) == 2
    assert derive_flip_direction("Yes", "Yes", 1) == "stable_correct"
    assert derive_flip_direction("No", "No", 1) == "stable_wrong"
    assert derive_flip_direction("Yes", "No", 0) == "flip_to_correct"
    assert derive_flip_direction("No", "Yes", 0) == "flip_to_wrong"
    assert derive_flip_direction(None, "Yes", 1) == "stable_correct"
    # Unsure final on a negative pair: correct only when Unsure counts as negative
    assert derive_flip_direction("No", "Unsure", 0, unsure_as_negative=True) == "stable_correct"
    assert derive_flip_direction("No", "Unsure", 0, unsure_as_negative=False) == "flip_to_wrong"


def test_unsure_prediction_correctness_follows_the_mapping() -> None:
    as_negative = six_episodes(unsure_as_negative=True)[5]
    as_wrong = six_episodes(unsure_as_negative=False)[5]
    assert as_negative.prediction == "Unsure" and as_negative.is_correct is True
    assert as_wrong.is_correct is False
    assert as_wrong.flip_direction == "flip_to_wrong"


def test_direction_offset_normalises_like_the_env() -> None:
    assert direction_offset("back (MLLM-Reasoning)") == 3
    assert direction_offset("  Front-Right ") == 5
    assert direction_offset("sideways") is None
    assert direction_offset(None) is None


def _replace(rec: EpisodeRecord, **changes: object) -> EpisodeRecord:
    return dataclasses.replace(rec, **changes)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"nav_failures": 3}, "nav_failures"),
        ({"effective_views": 2}, "effective_views"),
        ({"is_correct": True}, "is_correct"),
        ({"label": 0}, "label"),
        ({"pair_type": "neg_same"}, "label"),
        ({"episode_key": "s1/ep2/other"}, "episode_key"),
        ({"prediction": "Maybe"}, "prediction"),
        ({"prediction_flips": 0}, "prediction_flips"),
        ({"flip_direction": "stable_wrong"}, "flip_direction"),
        ({"first_view_prediction": "No"}, "first.view"),
        ({"first_view_prediction": "Unsure"}, "first_view_prediction must be the first step prediction"),
        ({"steps": 4, "effective_views": 2}, "one entry per step"),
        ({"status": "infra_failure"}, "failure_reason"),
        ({"failure_reason": "boom"}, "failure_reason"),
        ({"attempts": 0}, "attempts"),
        ({"stop_reason": "tired"}, "stop_reason"),
        ({"model_calls": {"verifier": -1}}, "model_calls"),
        ({"label": True}, "label"),
        ({"steps": 3.0}, "steps"),
    ],
)
def test_inconsistent_records_are_refused(changes: dict[str, object], message: str) -> None:
    rec = six_episodes()[1]  # positive, wrong, 3 steps, 1 unreachable + 1 trap, flip_to_wrong
    with pytest.raises(RecordError, match=message):
        _replace(rec, **changes)


def test_transcript_counts_must_agree_with_the_record() -> None:
    rec = six_episodes()[1]
    steps = list(rec.transcript)
    steps[0] = dataclasses.replace(steps[0], trap_view=False)
    with pytest.raises(RecordError, match="nav_fail_trap"):
        _replace(rec, transcript=tuple(steps))
    with pytest.raises(RecordError, match="numbered"):
        _replace(rec, transcript=(rec.transcript[1], rec.transcript[0], rec.transcript[2]))


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"decision": "Yes", "outcome": "moved"}, "outcome must be 'none'"),
        ({"trap_view": True, "outcome": "unreachable"}, "trap_view"),
        ({"sector": 6}, "sector"),
        ({"detection_confidence": 1.5}, "detection_confidence"),
        ({"detection_confidence": float("nan")}, "finite"),
        ({"crop_file": "../outside.jpg"}, "crop_file"),
        ({"crop_file": "/abs/crop.jpg"}, "crop_file"),
        ({"step_prediction": "Unsure"}, "step_prediction"),
        ({"outcome": "teleported"}, "outcome"),
    ],
)
def test_bad_transcript_steps_are_refused(changes: dict[str, object], message: str) -> None:
    base = transcript(["Yes", "No"], "No")[0]
    with pytest.raises(RecordError, match=message):
        dataclasses.replace(base, **changes)


def test_from_json_is_strict_about_keys() -> None:
    data = six_episodes()[0].to_json_dict()
    data["surprise"] = 1
    with pytest.raises(RecordError, match="unknown keys \\['surprise'\\]"):
        EpisodeRecord.from_json_dict(data)
    data = six_episodes()[0].to_json_dict()
    del data["status"]
    with pytest.raises(RecordError, match="missing keys \\['status'\\]"):
        EpisodeRecord.from_json_dict(data)
    with pytest.raises(RecordError, match="not valid JSON"):
        EpisodeRecord.from_json_line('{"episode_key": ')
    step = six_episodes()[0].to_json_dict()["transcript"][0]
    step["attributes"][0]["state"] = "Perhaps"
    with pytest.raises(RecordError, match="state"):
        TranscriptStep.from_json_dict(step)


def test_infra_failure_record_shape() -> None:
    rec = infra(7, index_entry(episode="ep7"), reason="MoveToSector timed out", attempts=2)
    d = rec.to_json_dict()
    assert d["status"] == "infra_failure" and d["prediction"] == "Unsure" and d["is_correct"] is False
    assert d["flip_direction"] is None and d["stop_reason"] == "failure" and d["attempts"] == 2
    assert d["failure_reason"] == "MoveToSector timed out"
    with pytest.raises(RecordError, match="infra_failure"):
        _replace(rec, prediction="Yes")
    with pytest.raises(RecordError, match="infra_failure"):
        _replace(rec, is_correct=True)


def test_record_json_is_plain_json() -> None:
    rec = six_episodes()[4]
    assert json.loads(rec.to_json_line()) == rec.to_json_dict()


def test_records_build_from_real_index_lines() -> None:
    """Every line of the generated benchmark index yields a valid record with a unique key."""
    from pathlib import Path

    index = (
        Path(__file__).resolve().parents[2] / "data" / "pv_synthetic_default" / "val" / "pv_index_all.jsonl"
    )
    if not index.is_file():
        pytest.skip(f"{index} not generated")
    keys = set()
    for i, line in enumerate(index.read_text().splitlines()):
        entry = json.loads(line)
        rec = record(i, entry, "No", ["No"])
        assert rec.label == entry["label"] and rec.pair_type == entry["pair_type"]
        assert rec.is_correct == (entry["label"] == 0)
        keys.add(rec.episode_key)
        assert EpisodeRecord.from_json_line(rec.to_json_line()) == rec
    assert len(keys) == i + 1
