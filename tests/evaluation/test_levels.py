"""Camera height levels in the evaluation: records, metrics by level and the report section (#41).

A one-level run must stay byte for byte what it was before levels existed (records, metrics.json, report);
the hashes below were taken with the code of the commit that introduced the levels contract (bea2222), before
any evaluation code knew about levels.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from aiv_eval import (
    EpisodeRecord,
    RecordError,
    ResultsStore,
    TranscriptStep,
    build_episode_record,
    compute_metrics,
    write_report,
)
from aiv_eval.analysis.metrics import decision_change_step, move_kind
from aiv_eval.records.transcripts import transcript_from_reports
from aiv_interfaces.msg import StepReport

from .builders import attribute, index_entry, run_config, six_episodes

#: sha256 of the six builder records' JSON lines and of their metrics, as the code before levels wrote them.
ONE_LEVEL_RECORDS_SHA256 = "be76d6816f8a73f3e677d448ba0e1a3867142dc6a290b940d140f5f3ee895706"
ONE_LEVEL_METRICS_SHA256 = "0a28bb7f7204d8ca3b3f101dbebb7a185587b0358d751c132bbc07d8ae3c6251"


def leveled_record(
    index: int,
    pair_type: str,
    prediction: str,
    steps: Sequence[tuple[int, int, str, str | None, str]],
) -> EpisodeRecord:
    """A record from ``(sector, level, step prediction, requested move, its outcome)`` per step; the last
    step decides ``prediction``."""
    target = f"obj{index}"
    entry = index_entry(
        scene=f"s{index}",
        episode=f"ep{index}",
        target=target,
        query=target if pair_type == "positive" else f"other{index}",
        pair_type=pair_type,
    )
    transcript = []
    for k, (sector, level, step_prediction, nav_rel, outcome) in enumerate(steps):
        last = k == len(steps) - 1
        transcript.append(
            TranscriptStep(
                step=k + 1,
                sector=sector,
                level=level,
                capture_tag=f"s{2 * sector}_far" + {0: "", 1: "_above", -1: "_below"}[level],
                duplicate_view=k > 0 and steps[k - 1][4] in ("unreachable", "already_visited"),
                detection_confidence=0.9,
                decision=prediction if last else "Unsure",
                step_prediction=step_prediction,
                nav_rel=None if last else nav_rel,
                nbv_reason="" if last else "look elsewhere",
                outcome="none" if last else outcome,
                trap_view=False,
                attributes=(attribute("lid", "Yes", "Matched", 0.9),),
            )
        )
    return build_episode_record(
        episode_index=index,
        index_record=entry,
        query_descriptions=("a mug with a blue lid",),
        prediction=prediction,
        transcript=transcript,
        stop_reason="final",
        run_id="run-test",
    )


def leveled_records() -> list[EpisodeRecord]:
    """Four episodes: an "up" that brings the deciding view, a "down" after a failed "up", an episode decided
    at the first view, and a planar move that turns a right first answer into a wrong one."""
    return [
        leveled_record(0, "positive", "Yes", [(0, 0, "No", "up", "moved"), (0, 1, "Yes", None, "none")]),
        leveled_record(
            1,
            "neg_same",
            "No",
            [
                (0, 0, "Yes", "front-left", "moved"),
                (1, 0, "Yes", "up", "unreachable"),
                (1, 0, "Yes", "down", "moved"),
                (1, -1, "No", None, "none"),
            ],
        ),
        leveled_record(2, "neg_diff", "No", [(0, 0, "No", None, "none")]),
        leveled_record(3, "positive", "No", [(0, 0, "Yes", "back", "moved"), (3, 0, "No", None, "none")]),
    ]


def test_one_level_records_and_metrics_are_byte_identical_to_before_levels() -> None:
    records = six_episodes()
    lines = "\n".join(r.to_json_line() for r in records)
    assert hashlib.sha256(lines.encode()).hexdigest() == ONE_LEVEL_RECORDS_SHA256
    assert '"level"' not in lines
    metrics = compute_metrics(records)
    assert "levels" not in metrics
    assert hashlib.sha256(json.dumps(metrics).encode()).hexdigest() == ONE_LEVEL_METRICS_SHA256


def test_level_is_written_after_the_sector_only_off_eye_level_and_read_back() -> None:
    rec = leveled_records()[1]
    data = json.loads(rec.to_json_line())
    steps = data["transcript"]
    assert [s.get("level") for s in steps] == [None, None, None, -1]
    assert list(steps[3])[:3] == ["step", "sector", "level"]
    assert list(steps[0])[:3] == ["step", "sector", "capture_tag"]
    again = EpisodeRecord.from_json_line(rec.to_json_line())
    assert again == rec
    assert again.to_json_line() == rec.to_json_line()
    assert [s.level for s in again.transcript] == [0, 0, 0, -1]


@pytest.mark.parametrize(
    ("level", "message"),
    [(3, "level must be a camera height level -2..2, got 3"), (True, "level must be an int"),
     ("1", "level must be an int")],
)  # fmt: skip
def test_a_level_outside_the_levels_is_refused(level: object, message: str) -> None:
    step = leveled_records()[0].transcript[0]
    with pytest.raises(RecordError, match=message):
        dataclasses.replace(step, level=level)
    data = step.to_json_dict() | {"level": level}
    with pytest.raises(RecordError, match=message):
        TranscriptStep.from_json_dict(data)


def test_the_ros_path_copies_the_step_report_level() -> None:
    """The evaluator node reads the Verdict's StepReport messages: their ``level`` reaches the record."""
    reports = []
    for step, (level, action) in enumerate([(0, StepReport.ACTION_MOVE), (1, StepReport.ACTION_DECIDE)]):
        report = StepReport(step=step, sector=2, level=level, capture_tag="s4_far", action=action)
        report.move_direction = "up" if action == StepReport.ACTION_MOVE else ""
        report.move_outcome = "moved" if action == StepReport.ACTION_MOVE else "decided"
        reports.append(report)
    steps = transcript_from_reports(reports)
    assert [s.level for s in steps] == [0, 1]
    assert [s.nav_rel for s in steps] == ["up", None]


def test_move_kinds_and_the_step_that_changed_the_decision() -> None:
    assert [move_kind(x) for x in ("up", "Down (MLLM-Reasoning)", "front-left", "upper", None)] == [
        "up",
        "down",
        "planar",
        "planar",
        None,
    ]
    records = leveled_records()
    assert [decision_change_step(r) for r in records] == [1, 3, None, 1]


def test_metrics_by_level() -> None:
    m = compute_metrics(leveled_records(), bootstrap_resamples=50)
    assert m["accuracy"] == 0.75 and m["asd"] == 2.25  # the headline numbers as before
    levels = m["levels"]
    assert levels["levels"] == ["below", "eye", "above"]
    assert levels["views"] == {
        "below": {"views": 1, "episodes": 1},
        "eye": {"views": 7, "episodes": 4},
        "above": {"views": 1, "episodes": 1},
    }
    zero = {"moved": 0, "stayed": 0, "unreachable": 0, "already_visited": 0, "rejected": 0}
    assert levels["moves"] == {
        "planar": zero | {"requested": 2, "moved": 2},
        "up": zero | {"requested": 2, "moved": 1, "unreachable": 1},
        "down": zero | {"requested": 1, "moved": 1},
    }
    assert levels["decision_changes"] == {
        "episodes": 3,
        "by_move": {"planar": 1, "up": 1, "down": 1},
        "to_correct": {"planar": 0, "up": 1, "down": 1},
        "by_level": {"below": 1, "eye": 1, "above": 1},
        "all_by_move": {"planar": 1, "up": 1, "down": 1},
    }
    assert levels["episodes"] == {
        "off_eye_level": {"n": 2, "accuracy": 1.0, "asd": 3.0},
        "eye_level_only": {"n": 2, "accuracy": 0.5, "asd": 1.5},
    }
    assert list(m)[-1] == "levels"  # after every key a one-level run writes


def test_every_change_is_counted_but_only_the_last_one_decides() -> None:
    flip_flop = leveled_record(
        0,
        "positive",
        "Yes",
        [(0, 0, "No", "up", "moved"), (0, 1, "Yes", "front-left", "moved"), (1, 1, "No", "down", "moved"),
         (1, 0, "Yes", None, "none")],
    )  # fmt: skip
    changes = compute_metrics([flip_flop], bootstrap_resamples=10)["levels"]["decision_changes"]
    assert changes["by_move"] == {"planar": 0, "up": 0, "down": 1}
    assert changes["all_by_move"] == {"planar": 1, "up": 1, "down": 1}
    assert changes["by_level"] == {"eye": 1, "above": 0}


def test_report_shows_views_by_height_level_only_for_a_leveled_run(tmp_path: Path) -> None:
    flat, leveled = tmp_path / "flat", tmp_path / "leveled"
    for run, records in ((flat, six_episodes()), (leveled, leveled_records())):
        with ResultsStore.open(run, run_config(name=run.name)) as store:
            for rec in records:
                store.append(rec)
        write_report([run], bootstrap_resamples=20)
    for name in ("report.md", "report.html"):
        assert "Views by height level" not in (flat / name).read_text(encoding="utf-8")
    markdown = (leveled / "report.md").read_text(encoding="utf-8")
    assert "## Views by height level" in markdown
    assert "| up | 2 | 1 | 0 | 1 | 0 | 0 | 1 | 1 | 1 |" in markdown
    assert "| above | 1 | 1 | 1 |" in markdown
    html = (leveled / "report.html").read_text(encoding="utf-8")
    assert "<h2>Views by height level</h2>" in html
    page = (leveled / "episodes" / "ep_000003.html").read_text(encoding="utf-8")  # the wrong one, eye level
    assert "above" not in page and "below" not in page
    page = (leveled / "episodes" / "ep_000000.html").read_text(encoding="utf-8")  # up, then decided above
    assert "· above" in page
