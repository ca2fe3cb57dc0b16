"""Interchange with the reference implementation: legacy index lines, reference result files, our export.

Every input here is a hand-written fixture (``fixtures/reference/``, see its README) or an inline line written
from the spec; only the round trip goes through our own exporter.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from aiv_dataset.cli import main as aiv_dataset
from aiv_dataset.descriptions import load_descriptions
from aiv_dataset.errors import DatasetError
from aiv_dataset.index_records import read_pair_index
from aiv_dataset.layout import PInVerifyDataset
from aiv_eval import ResultsStore, compute_metrics, load_run
from aiv_eval.cli import main as aiv_eval
from aiv_eval.interchange import (
    REFERENCE_EPISODE_KEYS,
    REFERENCE_FLIP_KEYS,
    REFERENCE_METRICS_KEYS,
    metric_differences,
    read_reference_results,
    reference_metrics_part,
)
from aiv_offline_sim.environment import Action, PInVerifyEnv
from PIL import Image

from .builders import index_entry, infra, run_config, six_episodes

FIXTURES = Path(__file__).parent / "fixtures" / "reference"
LEGACY = FIXTURES / "legacy_index.jsonl"
RESULTS_LIST = FIXTURES / "results_list" / "results.json"
OUTPUT_DIR = FIXTURES / "output_dir"


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err, err
    return err


# ------------------------------------------------------------------------------------------ legacy index


def test_legacy_index_converts_to_the_hand_written_pair_index(tmp_path: Path) -> None:
    out, descriptions = tmp_path / "pv_index_legacy.jsonl", tmp_path / "descriptions.json"
    code = aiv_dataset(
        ["import-legacy-index", str(LEGACY), str(out), "--descriptions-out", str(descriptions)]
    )
    assert code == 0
    got, expected = _jsonl(out), _jsonl(FIXTURES / "legacy_index.expected.jsonl")
    assert got == expected
    assert [list(line) for line in got] == [list(line) for line in expected]  # key order too
    want = json.loads((FIXTURES / "legacy_index.expected_descriptions.json").read_text())
    assert json.loads(descriptions.read_text()) == want
    # The converted file is an ordinary pair index for the strict reader.
    records = read_pair_index(out)
    assert [(r.scene, r.episode, r.pair_type) for r in records] == [
        ("00900-AbCdEfGhIjK", "7", "positive"),
        ("00903-HiJkLmNoPqR", "12", "positive"),
        ("00900-AbCdEfGhIjK", "7", "neg_same"),
    ]
    assert records[1].target_object_category == "unknown" and records[1].query_object_id == "hat-green-03"


def _write_frames(root: Path, episode_path: str, tags: list[str]) -> None:
    rgb = root / episode_path / "rgb"
    rgb.mkdir(parents=True)
    for i, tag in enumerate(tags):
        frame = np.full((64, 36, 3), 40 * (i + 1), dtype=np.uint8)
        Image.fromarray(frame).save(rgb / f"rgb_{tag}.png")


def test_converted_legacy_records_play_in_the_environment(tmp_path: Path) -> None:
    out, descriptions = tmp_path / "pv.jsonl", tmp_path / "descriptions.json"
    assert (
        aiv_dataset(["import-legacy-index", str(LEGACY), str(out), "--descriptions-out", str(descriptions)])
        == 0
    )
    root = tmp_path / "pv_dataset"
    _write_frames(root, "pin_capture/val/00900-AbCdEfGhIjK/7", ["s0_far", "s2_far", "s2_near", "s6_far"])
    records = read_pair_index(out)
    env = PInVerifyEnv(
        [records[0], records[2]], PInVerifyDataset(root), descriptions=load_descriptions(descriptions)
    )
    obs = env.reset(0)
    # captures_meta is played instead of a meta.json (there is none); the first capture is the start view
    assert obs.rgb_path is not None and obs.rgb_path.endswith("00900-AbCdEfGhIjK/7/rgb/rgb_s0_far.png")
    assert obs.load_image()[0, 0, 0] == 40
    assert obs.query_descriptions == (
        "a red ceramic mug with a white handle",
        "red coffee mug, chipped rim",
        "a glossy red cup with a handle",
    )
    # no camera positions: no sector can be addressed, so every move fails (spec §2.6, §3.2)
    assert obs.current_sector == 0 and obs.available_sectors == ()
    moved = env.step(Action.move("back"))
    assert not moved.done and moved.info.navigation_failed
    decided = env.step(Action.yes())
    assert decided.done and decided.info.decision == "Yes"
    truth = env.ground_truth
    assert (truth.label, truth.pair_type, truth.target_object_id) == (1, "positive", "mug-red-01")
    # the explicit neg_same line: its text_pos describes the query (the blue mug)
    obs = env.reset(1)
    assert obs.query_descriptions[0] == "a navy blue mug with white polka dots"
    assert env.ground_truth.pair_type == "neg_same"


def test_the_strict_index_reader_points_legacy_lines_at_the_converter() -> None:
    with pytest.raises(DatasetError) as caught:
        read_pair_index(LEGACY)
    error = caught.value
    assert (error.line, error.field) == (1, "scene") and "import-legacy-index" in str(error)


_FULL = json.loads(LEGACY.read_text().splitlines()[0])


def _without(*keys: str, **changes: Any) -> dict[str, Any]:
    line = {k: v for k, v in _FULL.items() if k not in keys}
    line.update(changes)
    return line


@pytest.mark.parametrize(
    ("line", "field", "words"),
    [
        (_without("episode_id"), "episode_id", "missing required field"),
        (_without("episode_path"), "episode_path", "missing required field"),
        (_without("object_id"), "object_id", "missing required field"),
        (_without(query_object_id="mug-blue-02"), "query_object_id", "reference default label = 1"),
        (_without(label=0), "label", "reference default pair_type = 'positive'"),
        (_without(pair_type="neg_any", label=0), "pair_type", "expected one of"),
        (_without(scene="00999-Other"), "scene", "disagrees with 'scene_key'"),
        (_without(text_pos="a red mug"), "text_pos", "expected a JSON list"),
        (_without(text_neg=["ok", 3]), "text_neg[1]", "expected a string"),
        (_without(neg_object_id=True), "neg_object_id", "expected a string"),
        (
            _without(captures_meta=[{"tag": "s0_far"}, {"tag": "s2_far", "sector_index": "two"}]),
            "captures_meta[1].sector_index",
            "expected a finite number",
        ),
        (
            _without(captures_meta=[{"tag": "s0_far"}, {"tag": "s0_far"}]),
            "captures_meta[1].tag",
            "duplicate tag",
        ),
        (_without(episode_path="/abs/pin_capture/val/x/7"), "episode_path", "is absolute"),
    ],
)
def test_malformed_legacy_lines_exit_2_naming_file_line_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], line: dict[str, Any], field: str, words: str
) -> None:
    source = tmp_path / "legacy.jsonl"
    source.write_text(json.dumps(_FULL) + "\n" + json.dumps(line) + "\n")
    assert aiv_dataset(["import-legacy-index", str(source), str(tmp_path / "out.jsonl")]) == 2
    err = _error_line(capsys)
    assert f"{source}:2: field '{field}':" in err and words in err
    assert not (tmp_path / "out.jsonl").exists()  # nothing is written when a line is bad


def test_legacy_conversion_refuses_bad_json_and_conflicting_descriptions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "legacy.jsonl"
    source.write_text(json.dumps(_FULL) + "\n\n{oops\n")
    assert aiv_dataset(["import-legacy-index", str(source), str(tmp_path / "o.jsonl")]) == 2
    assert f"{source}:3: invalid JSON" in _error_line(capsys)
    other = _without(episode_id="9", text_pos=["a different red mug"])
    source.write_text(json.dumps(_FULL) + "\n" + json.dumps(other) + "\n")
    args = ["import-legacy-index", str(source), str(tmp_path / "o.jsonl"), "--descriptions-out"]
    assert aiv_dataset([*args, str(tmp_path / "d.json")]) == 2
    err = _error_line(capsys)
    assert f"{source}:2: field 'text_pos':" in err and "differ from those given at line 1" in err
    existing = tmp_path / "existing.json"
    existing.write_text("{}")
    assert aiv_dataset([*args, str(existing)]) == 2
    assert "refusing to overwrite" in _error_line(capsys) and existing.read_text() == "{}"


# ------------------------------------------------------------------------------------------ reference results


def _score_json(path: Path, *extra: str, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    assert aiv_eval(["score-reference", str(path), "--json", "--bootstrap-resamples", "50", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_reference_results_list_scores_to_the_hand_computed_metrics(
    capsys: pytest.CaptureFixture[str],
) -> None:
    m = _score_json(RESULTS_LIST, capsys=capsys)
    # 7 records, one an older copy of a later one: 6 episodes; correct: ep7, ep3 (Unsure as No), ep11, ep12
    assert (m["total_episodes"], m["correct_count"], m["wrong_count"], m["accuracy"]) == (6, 4, 2, 0.6667)
    assert m["asd"] == 2.5  # (3 + 2 + 6 + 1 + 1 + 2) / 6
    assert m["nav_stats"] == {
        "total_nav_failures": 5,
        "nav_fail_unreachable": 3,
        "nav_fail_trap": 2,
        "episodes_with_nav_failure": 4,
        "nav_failure_rate_per_step": 0.3333,  # 5 / 15
        "nav_failure_rate_per_episode": 0.6667,
        "avg_nav_failures_per_episode": 0.83,
    }
    # first view scored on 5 records (ep11 has none); only ep12's "No" is right
    assert m["diagnostic_stats"] == {"first_view_accuracy": 0.2, "avg_effective_views": 1.67}
    assert m["correct_episodes"] == [
        "00900-AbCdEfGhIjK/7",
        "00901-LmNoPqRsTuV/3",
        "00902-WxYzAbCdEfG/11",
        "00902-WxYzAbCdEfG/12",
    ]
    assert m["wrong_episodes"] == ["00900-AbCdEfGhIjK/8", "00901-LmNoPqRsTuV/5"]
    ppt = m["per_pair_type"]
    assert list(ppt) == ["positive", "neg_same", "neg_diff"]
    assert {k: ppt["positive"][k] for k in ("accuracy", "asd", "nav_fail_unreachable", "nav_fail_trap")} == {
        "accuracy": 0.5,
        "asd": 2.5,
        "nav_fail_unreachable": 1,
        "nav_fail_trap": 1,
    }
    assert (ppt["positive"]["first_view_accuracy"], ppt["positive"]["avg_effective_views"]) == (0.0, 1.5)
    assert (ppt["neg_same"]["accuracy"], ppt["neg_same"]["asd"], ppt["neg_same"]["avg_effective_views"]) == (
        0.5,
        3.5,
        2.5,
    )
    assert ppt["neg_same"]["wrong_episodes"] == ["00901-LmNoPqRsTuV/5"]  # the later copy of ep5 counts
    assert (ppt["neg_diff"]["accuracy"], ppt["neg_diff"]["first_view_accuracy"]) == (1.0, 1.0)
    cats = m["per_category"]
    assert list(cats) == ["backpack", "hat", "mug", "unknown", "wallet"]  # ep12 has no category: "unknown"
    assert cats["mug"] == {
        "total": 2,
        "correct": 2,
        "accuracy": 1.0,
        "positive": {"total": 1, "correct": 1, "accuracy": 1.0},
        "neg_same": {"total": 1, "correct": 1, "accuracy": 1.0},
        "neg_diff": {"total": 0, "correct": 0, "accuracy": 0.0},
    }
    assert cats["hat"]["positive"] == {"total": 1, "correct": 0, "accuracy": 0.0}
    assert m["evaluation"]["unsure_as_negative"] is True  # what ep3's is_correct says
    assert m["flip_stats"]["total_flips"] == 1  # ep7: No, Yes, Yes


def test_a_reference_output_tree_agrees_with_its_own_metrics_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert aiv_eval(["score-reference", str(OUTPUT_DIR), "--bootstrap-resamples", "50"]) == 0
    out = capsys.readouterr().out
    assert "3 reference record(s)" in out and "episode_files, 3 files" in out
    assert (
        "| output_dir | llm | attr_majority | attribute | 3 | 0.667 | 1.000 | 0.000 | 1.000 | 1.33 |" in out
    )
    assert "agrees with these metrics" in out
    m = _score_json(OUTPUT_DIR, capsys=capsys)
    theirs = json.loads((OUTPUT_DIR / "metrics.json").read_text())
    assert metric_differences(reference_metrics_part(m), theirs) == []
    assert m["config_info"] == theirs["config_info"]


def test_a_metrics_json_that_disagrees_is_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = tmp_path / "ref"
    shutil.copytree(OUTPUT_DIR, copy)
    theirs = json.loads((copy / "metrics.json").read_text())
    theirs["asd"] = 1.5
    theirs["per_pair_type"]["neg_same"]["wrong_episodes"] = []
    (copy / "metrics.json").write_text(json.dumps(theirs))
    assert aiv_eval(["score-reference", str(copy), "--bootstrap-resamples", "50"]) == 0
    out = capsys.readouterr().out
    assert "differs in 2 value(s)" in out and "asd: ours 1.33, file 1.5" in out
    assert "per_pair_type.neg_same.wrong_episodes" in out


def test_import_reference_makes_a_run_dir_the_analysis_commands_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = tmp_path / "imported"
    code = aiv_eval(
        [
            "import-reference",
            str(OUTPUT_DIR),
            "--run-dir",
            str(run_dir),
            "--name",
            "ref-mv",
            "--bootstrap-resamples",
            "50",
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "accuracy 0.6667" in out and "agrees with these metrics" in out
    run = load_run(run_dir)
    assert run.name == "ref-mv" and len(run.records) == 3
    assert run.run_config.config_info["nbv_type"] == "llm" and run.run_config.unsure_as_negative is True
    neg_same = next(r for r in run.records if r.pair_type == "neg_same")
    assert (neg_same.nav_fail_unreachable, neg_same.step_predictions, neg_same.first_view_prediction) == (
        1,
        ("Yes", "Yes"),
        "Yes",
    )
    assert aiv_eval(["metrics", str(run_dir), "--bootstrap-resamples", "50"]) == 0
    assert "accuracy 0.6667" in capsys.readouterr().out
    assert aiv_eval(["table", str(run_dir), "--bootstrap-resamples", "50"]) == 0
    assert "| ref-mv | llm |" in capsys.readouterr().out
    # importing into a run dir that already holds a run is refused
    assert aiv_eval(["import-reference", str(OUTPUT_DIR), "--run-dir", str(run_dir)]) == 2
    assert "already holds a run" in _error_line(capsys)


def test_one_episode_file_can_be_scored_alone(capsys: pytest.CaptureFixture[str]) -> None:
    path = OUTPUT_DIR / "neg_same" / "wrong" / "00910-QwErTyUiOpA" / "2" / "episode.json"
    m = _score_json(path, capsys=capsys)
    assert (m["total_episodes"], m["accuracy"], m["nav_stats"]["nav_fail_unreachable"]) == (1, 0.0, 1)


_BASE = json.loads(RESULTS_LIST.read_text())[1]  # ep8: positive, target_object_id null, one failed move


def _record(**changes: Any) -> dict[str, Any]:
    out = json.loads(json.dumps(_BASE))
    for key, value in changes.items():
        if value is _DROP:
            out.pop(key, None)
        else:
            out[key] = value
    return out


_DROP = object()


@pytest.mark.parametrize(
    ("record", "field", "words"),
    [
        (_record(is_correct=_DROP), "is_correct", "missing required field"),
        (_record(is_correct=True), "is_correct", "contradicts prediction 'No' and label 1"),
        (_record(steps=0), "steps", "expected an integer >= 1"),
        (_record(steps=3), "steps", "disagrees with the transcript's 2 step(s)"),
        (
            _record(nav_fail_unreachable=0, nav_failures=0),
            "nav_fail_unreachable",
            "transcript, which counts 1",
        ),
        (_record(nav_failures=2), "nav_failures", "is not nav_fail_unreachable + nav_fail_trap = 1"),
        (_record(effective_views=2), "effective_views", "is not steps - nav_fail_unreachable"),
        (_record(first_view_prediction="Yes"), "first_view_prediction", "disagrees with the transcript"),
        (_record(prediction="Maybe"), "prediction", "expected one of ['Yes', 'No', 'Unsure']"),
        (_record(label=0), "label", "contradicts pair_type 'positive'"),
        (
            _record(label=0, pair_type="neg_same", is_correct=True),
            "target_object_id",
            "needs the id of the object",
        ),
        (_record(target_object_id="hat-red-99"), "target_object_id", "contradicts label 1"),
        (_record(scene_id=None), "scene_id", "required field is null"),
        (_record(query_descriptions=["ok", 7]), "query_descriptions[1]", "expected a string"),
        (
            _record(transcript=[{"info": {"navigation_failed": "yes"}}] * 2),
            "transcript[0].info.navigation_failed",
            "true or false",
        ),
    ],
)
def test_malformed_reference_records_exit_2_naming_file_episode_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], record: dict[str, Any], field: str, words: str
) -> None:
    source = tmp_path / "results.json"
    source.write_text(json.dumps([json.loads(json.dumps(_BASE)) | {"episode_id": "1"}, record], indent=2))
    assert aiv_eval(["score-reference", str(source)]) == 2
    err = _error_line(capsys)
    assert f"{source} [episode #1" in err and f"field '{field}':" in err and words in err, err


def test_reference_files_that_cannot_be_read_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "results.json"
    broken.write_text('[\n  {"episode_id": "1",\n   oops}\n]\n')
    assert aiv_eval(["score-reference", str(broken)]) == 2
    assert f"{broken}:3: invalid JSON" in _error_line(capsys)
    broken.write_text('"a string"')
    assert aiv_eval(["score-reference", str(broken)]) == 2
    assert "expected a results list or one episode record" in _error_line(capsys)
    assert aiv_eval(["score-reference", str(tmp_path / "missing")]) == 2
    assert "no such file or directory" in _error_line(capsys)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert aiv_eval(["score-reference", str(empty)]) == 2
    assert "no results.json and no episode.json" in _error_line(capsys)
    # the same pair in two episode files (a stale copy from an earlier run)
    tree = tmp_path / "tree"
    shutil.copytree(OUTPUT_DIR, tree)
    stale = tree / "neg_same" / "correct" / "00910-QwErTyUiOpA" / "2"
    stale.mkdir(parents=True)
    shutil.copy(tree / "neg_same" / "wrong" / "00910-QwErTyUiOpA" / "2" / "episode.json", stale)
    assert aiv_eval(["score-reference", str(tree)]) == 2
    assert "also has an episode file" in _error_line(capsys)


def test_the_unsure_mapping_must_be_one_for_the_whole_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    unsure_neg = json.loads(RESULTS_LIST.read_text())[2]  # ep3: Unsure on neg_same, is_correct true
    as_wrong = dict(unsure_neg, episode_id="4", is_correct=False)
    source = tmp_path / "results.json"
    source.write_text(json.dumps([unsure_neg, as_wrong]))
    assert aiv_eval(["score-reference", str(source)]) == 2
    err = _error_line(capsys)
    assert "[episode #1: 00901-LmNoPqRsTuV/4]: field 'is_correct':" in err and "one way" in err
    assert aiv_eval(["score-reference", str(RESULTS_LIST), "--unsure-as-wrong"]) == 2
    assert "contradicts the requested mapping" in _error_line(capsys)
    source.write_text(json.dumps([as_wrong]))
    m = _score_json(source, capsys=capsys)
    assert m["accuracy"] == 0.0 and m["evaluation"]["unsure_as_negative"] is False


# ------------------------------------------------------------------------------------------ export


def _store(run_dir: Path, records: list[Any]) -> Path:
    with ResultsStore.open(run_dir, run_config()) as store:
        for record in records:
            store.append(record)
    return run_dir


def _pair_index(path: Path) -> Path:
    lines = []
    for scene, episode, target in (("s1", "ep1", "mugA"), ("s1", "ep2", "mugB"), ("s2", "ep3", "keysA")):
        entry = index_entry(scene=scene, episode=episode, target=target)
        lines.append(json.dumps({"episode_path": f"pin_capture/val/{scene}/{episode}", **entry}))
    path.write_text("\n".join(lines) + "\n")
    return path


def test_export_writes_the_hand_written_reference_episode(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = _store(tmp_path / "run", [*six_episodes(), infra(6, index_entry(episode="ep9", target="mugZ"))])
    descriptions = tmp_path / "descriptions.json"
    descriptions.write_text(json.dumps({"mugA": {"object_category": "mug", "descriptions": ["a white mug"]}}))
    out = tmp_path / "ref"
    args = ["export-reference", str(run_dir), str(out), "--index", str(_pair_index(tmp_path / "pv.jsonl"))]
    assert aiv_eval([*args, "--descriptions", str(descriptions)]) == 0
    printed = capsys.readouterr().out
    assert "wrote 6 episode record(s)" in printed and "left out 1 infra failure(s)" in printed
    got = json.loads((out / "positive" / "wrong" / "s1" / "ep2" / "episode.json").read_text())
    want = json.loads((FIXTURES / "expected_export" / "positive_wrong_s1_ep2.episode.json").read_text())
    assert got == want
    assert list(got) == list(REFERENCE_EPISODE_KEYS) + list(REFERENCE_FLIP_KEYS)
    assert [list(step) for step in got["transcript"]] == [["step", "observation", "action", "info"]] * 3
    # the reference layout: <pair_type>/<correct|wrong>/<scene>/<episode>/episode.json, one per episode
    files = sorted(str(p.relative_to(out)) for p in out.rglob("episode.json"))
    assert files == [
        "neg_diff/correct/s1/ep2/episode.json",
        "neg_diff/correct/s2/ep3/episode.json",
        "neg_same/correct/s1/ep1/episode.json",
        "neg_same/wrong/s2/ep3/episode.json",
        "positive/correct/s1/ep1/episode.json",
        "positive/wrong/s1/ep2/episode.json",
    ]
    results = json.loads((out / "results.json").read_text())
    assert [r["object_id"] for r in results] == ["mugA", "mugB", "mugC", "keysB", "mugA", "keysB"]
    neg_same = json.loads((out / "neg_same" / "correct" / "s1" / "ep1" / "episode.json").read_text())
    assert neg_same["target_descriptions"] == ["a white mug"]  # negatives: the target's, from --descriptions
    unsure = json.loads((out / "neg_diff" / "correct" / "s1" / "ep2" / "episode.json").read_text())
    assert (unsure["prediction"], unsure["is_correct"], unsure["target_descriptions"]) == ("Unsure", True, [])
    metrics = json.loads((out / "metrics.json").read_text())
    assert list(metrics) == [k for k in REFERENCE_METRICS_KEYS if k != "wall_time_s"]
    assert (metrics["accuracy"], metrics["asd"], metrics["total_episodes"]) == (0.6667, 2.17, 6)


def test_export_refuses_a_used_directory_and_a_bad_index(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = _store(tmp_path / "run", six_episodes())
    out = tmp_path / "ref"
    out.mkdir()
    (out / "keep.txt").write_text("x")
    assert aiv_eval(["export-reference", str(run_dir), str(out)]) == 2
    assert "not an empty directory" in _error_line(capsys)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"scene_key": "s1"}) + "\n")
    assert aiv_eval(["export-reference", str(run_dir), str(tmp_path / "ref2"), "--index", str(bad)]) == 2
    assert f"{bad}:1: field 'scene':" in _error_line(capsys)
    assert aiv_eval(["export-reference", str(tmp_path / "nothing"), str(tmp_path / "ref3")]) == 2
    assert "not a run dir" in _error_line(capsys)


def test_round_trip_export_then_import_keeps_every_metric(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for unsure_as_negative in (True, False):
        base = tmp_path / str(unsure_as_negative)
        records = six_episodes(unsure_as_negative=unsure_as_negative)
        with ResultsStore.open(base / "run", run_config(unsure_as_negative=unsure_as_negative)) as store:
            for record in records:
                store.append(record)
        assert aiv_eval(["export-reference", str(base / "run"), str(base / "ref")]) == 0
        assert (
            aiv_eval(
                [
                    "import-reference",
                    str(base / "ref"),
                    "--run-dir",
                    str(base / "back"),
                    "--bootstrap-resamples",
                    "50",
                ]
            )
            == 0
        )
        assert "agrees with these metrics" in capsys.readouterr().out
        ours, back = load_run(base / "run"), load_run(base / "back")
        assert back.run_config.unsure_as_negative is unsure_as_negative
        kwargs = {"unsure_as_negative": unsure_as_negative, "bootstrap_resamples": 50}
        m_ours = compute_metrics(ours.records, config_info=ours.run_config.config_info, **kwargs)
        m_back = compute_metrics(back.records, config_info=back.run_config.config_info, **kwargs)
        assert reference_metrics_part(m_back) == reference_metrics_part(m_ours)
        for extra in ("flip_stats", "confidence_intervals", "bootstrap", "nav_fail_variants"):
            assert m_back[extra] == m_ours[extra], extra
        by_key = {r.episode_key: r for r in ours.records}
        for record in back.records:
            original = by_key[record.episode_key]
            for name in ("prediction", "is_correct", "steps", "nav_fail_unreachable", "nav_fail_trap"):
                assert getattr(record, name) == getattr(original, name)
            assert record.step_predictions == original.step_predictions
            assert record.flip_direction == original.flip_direction


def test_reading_the_list_and_the_tree_of_one_export_gives_the_same_records(tmp_path: Path) -> None:
    run_dir = _store(tmp_path / "run", six_episodes())
    assert aiv_eval(["export-reference", str(run_dir), str(tmp_path / "ref")]) == 0
    from_list = read_reference_results(tmp_path / "ref" / "results.json")
    (tmp_path / "ref" / "results.json").unlink()
    from_tree = read_reference_results(tmp_path / "ref")
    assert from_tree.kind == "episode_files" and from_list.kind == "results_list"

    def facts(results: Any) -> list[tuple[Any, ...]]:
        return sorted(
            (e.key, e.prediction, e.steps, e.nav_fail_trap, e.step_predictions) for e in results.episodes
        )

    assert facts(from_list) == facts(from_tree)
