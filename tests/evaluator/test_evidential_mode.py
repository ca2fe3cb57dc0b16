"""The evidential mode end to end without ROS: calibrate on a dataset, decide with the table, score the records.

Run on the capture pipeline's micro preset (privileged ground truth), with the exact and noisy oracles whose
answers are cheap; the classical verifier goes through the same code.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from aiv_eval.cli import main as aiv_eval
from aiv_eval.evidence.trust_metrics import auroc, brier_score, expected_calibration_error, view_difficulty
from aiv_eval.records.episode import EpisodeRecord
from aiv_eval.records.store import load_run
from aiv_verifier.core.types import Decision
from aiv_verifier.evidence_tables import EvidenceFileError, load_calibration, load_visibility

REPO = Path(__file__).resolve().parents[2]
PARAMS = REPO / "ros2_ws" / "src" / "aiv_verifier" / "config" / "offline_eval.yaml"


@pytest.fixture(scope="module")
def calibration(micro_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("calibration") / "calibration.json"
    for backend in (
        ["verifier.verifier.backend=oracle"],
        ["verifier.verifier.backend=noisy_oracle", "verifier.verifier.noise.error_rate=0.1"],
    ):
        args = [
            "calibrate",
            str(PARAMS),
            "--dataset",
            str(micro_root),
            "--split",
            "val",
            "--out",
            str(out),
            "--merge",
        ]
        for item in backend:
            args += ["--set", item]
        assert aiv_eval(args) == 0
    return out


def test_calibrate_writes_a_table_per_backend_that_says_what_it_was_fitted_on(calibration: Path) -> None:
    loaded = load_calibration(calibration)
    assert sorted(loaded.backends) == ["noisy_oracle:error_rate=0.1,unsure_rate=0", "oracle"]
    assert [(item.preset, item.seed, item.split, item.pairs) for item in loaded.fitted_on] == [
        ("micro", 42, "val", 12)
    ]
    oracle = loaded.backends["oracle"]
    document = json.loads(calibration.read_text(encoding="utf-8"))["backends"]["oracle"]
    assert document["target_model"]["target_share"] == pytest.approx(4 / 12)
    # the exact oracle never says Yes to a claim that fails, so its Yes is evidence for the claim (from the
    # cells pooled over the few views of this tiny dataset), and its No evidence against it
    support, against = oracle.table.evidence("main_colour", "medium", Decision.YES)
    assert support > 0 and against == 0
    assert oracle.table.evidence("main_colour", "medium", Decision.NO)[1] > 0
    assert {cell["kind"] for cell in document["cells"]} >= {"main_colour", "category"}


def test_the_evidential_fusion_decides_from_the_calibration_and_records_its_evidence(
    micro_root: Path, calibration: Path, tmp_path: Path
) -> None:
    run_dir = tmp_path / "run"
    code = aiv_eval(
        [
            "run", str(PARAMS), "--mode", "inprocess", "--dataset", str(micro_root),
            "--set", "verifier.verifier.backend=oracle",
            "--set", f"verifier.verifier.calibration_file={calibration}",
            "--set", "verifier.agent.fusion=evidential",
            "--set", "verifier.agent.nbv=uncertainty",
            "--set", f"evaluator.run_dir={run_dir}",
            "--set", "evaluator.save_crops=false",
        ]
    )  # fmt: skip
    assert code == 0
    records = load_run(run_dir).records
    assert len(records) == 12 and all(record.is_ok for record in records)
    for record in records:
        assert record.evidence is not None
        assert 0.0 <= record.evidence.probability <= 1.0
        assert record.prediction in ("Yes", "No", "Unsure")
        if record.prediction == "Yes":
            assert record.label == 1  # the exact oracle never accepts a look-alike
        names = {claim.name for claim in record.evidence.claims}
        assert set(record.evidence.unverified) <= names
        for claim in record.evidence.claims:
            assert claim.belief + claim.disbelief + claim.uncertainty == pytest.approx(1.0, abs=1e-3)
            if claim.name in record.evidence.unverified:
                assert claim.uncertainty == 1.0
        # the record survives its own serialisation
        assert EpisodeRecord.from_json_line(record.to_json_line()) == record
    assert any(record.prediction == "Yes" for record in records)
    assert any(record.prediction == "No" for record in records)


def test_a_reference_run_writes_no_evidence(micro_root: Path, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    code = aiv_eval(
        [
            "run", str(PARAMS), "--mode", "inprocess", "--dataset", str(micro_root),
            "--set", "verifier.verifier.backend=oracle", "--set", f"evaluator.run_dir={run_dir}",
            "--set", "evaluator.save_crops=false", "--set", "evaluator.slice_end=3",
        ]
    )  # fmt: skip
    assert code == 0
    lines = (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines()
    assert lines and all('"evidence"' not in line for line in lines)


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("{not json", "not valid JSON"),
        ('{"format": "something else", "version": 1}', "'format' must be"),
        (
            '{"format": "aiv-evidence-calibration", "version": 1, "fitted_on": [], "backends": {}}',
            "fitted_on",
        ),
    ],
)
def test_a_bad_calibration_file_is_one_line_and_exit_code_2(
    micro_root: Path, tmp_path: Path, content: str, problem: str
) -> None:
    bad = tmp_path / "calibration.json"
    bad.write_text(content, encoding="utf-8")
    with pytest.raises(EvidenceFileError, match=problem):
        load_calibration(bad)
    completed = subprocess.run(
        [
            sys.executable, "-m", "aiv_eval.cli", "run", str(PARAMS), "--mode", "inprocess",
            "--dataset", str(micro_root), "--set", "verifier.agent.fusion=evidential",
            "--set", f"verifier.verifier.calibration_file={bad}", "--set", f"evaluator.run_dir={tmp_path / 'run'}",
        ],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert completed.returncode == 2, completed.stderr
    lines = completed.stderr.strip().splitlines()
    assert len(lines) == 1 and str(bad) in lines[0] and problem.split()[0].strip("'") in lines[0], lines


def test_a_backend_the_file_does_not_know_is_refused_by_name(micro_root: Path, calibration: Path) -> None:
    completed = subprocess.run(
        [
            sys.executable, "-m", "aiv_eval.cli", "run", str(PARAMS), "--mode", "inprocess",
            "--dataset", str(micro_root), "--set", "verifier.agent.fusion=evidential",
            "--set", f"verifier.verifier.calibration_file={calibration}",
        ],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert completed.returncode == 2
    assert "no calibration for verifier backend 'classical'" in completed.stderr


def test_the_shipped_tables_load_and_name_their_training_seeds() -> None:
    from aiv_verifier.evidence_tables import DEFAULT_CALIBRATION_FILE, DEFAULT_VISIBILITY_FILE, fitted_seeds

    calibration = load_calibration(DEFAULT_CALIBRATION_FILE)
    assert {"classical", "oracle"} <= set(calibration.backends)
    assert {11, 13} <= fitted_seeds(calibration.fitted_on)
    assert 42 not in fitted_seeds(calibration.fitted_on)  # the default dataset stays evaluation data
    assert all(item.split == "train" for item in calibration.fitted_on)
    visibility = load_visibility(DEFAULT_VISIBILITY_FILE)
    assert 42 not in fitted_seeds(visibility.fitted_on)


def test_scores_of_trust_on_hand_made_numbers() -> None:
    assert expected_calibration_error([0.05, 0.95], [0, 1]) == pytest.approx(0.05)
    assert expected_calibration_error([0.9, 0.9], [0, 1]) == pytest.approx(0.4)
    assert brier_score([1.0, 0.0], [1, 0]) == 0.0
    assert auroc([0.9, 0.8, 0.1], [1, 0, 0]) == 1.0
    assert auroc([0.5, 0.5], [1, 0]) == 0.5
    assert math.isnan(auroc([0.5], [1]))
    near_and_whole = {"mask_area_px": 102_400, "radius_m": 0.9}
    assert view_difficulty(near_and_whole, [near_and_whole]) == pytest.approx(1.0)
    no_mask = {"mask_area_px": 0, "radius_m": 1.7}
    assert view_difficulty(no_mask, [no_mask, near_and_whole]) == pytest.approx(0.0)


def test_the_trust_table_runs_every_row_and_pools(micro_root: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "table"
    code = aiv_eval(
        ["trust-table", str(PARAMS), "--dataset", str(micro_root), "--set", "verifier.verifier.backend=oracle",
         "--out", str(out), "--robot", "0.95/0.05", "--robot", "0.99/0.01", "--rows", "robot", "veto"]
    )  # fmt: skip
    assert code == 0
    document = json.loads((out / "trust_table.json").read_text(encoding="utf-8"))
    names = [row["name"] for row in document["rows"]]
    assert names == [
        "evidential robot@0.95 FPS", "evidential robot@0.99 FPS", "veto FPS",
        "evidential robot@0.95 uncertainty", "evidential robot@0.99 uncertainty", "veto uncertainty",
    ]  # fmt: skip
    assert 0 < document["ceiling"] <= 4  # the micro index has 4 positives
    for row in document["rows"]:
        assert row["n"] == 12 and len(row["predictions"]) == 12
        assert len(row["risk_coverage"]) == 50 and len(row["reliability"]) == 10
        if row["name"].startswith("evidential") and row["yes"]:
            assert row["yes_precision"] == 1.0  # the exact oracle accepts no look-alike
    assert "fitted on" in capsys.readouterr().out
    # the charts beside the JSON: a reliability curve and a risk-coverage curve per row
    page = (out / "trust_table.html").read_text(encoding="utf-8")
    assert page.count('<g id="reliability-row-') == 6 and page.count('<g id="risk-coverage-row-') == 6
    assert aiv_eval(["trust-pool", str(out / "trust_table.json"), str(out / "trust_table.json")]) == 0
    assert "pooled over 2 dataset(s)" in capsys.readouterr().out


def test_the_trust_table_refuses_a_dataset_made_with_a_seed_the_tables_were_fitted_on(tmp_path: Path) -> None:
    from support.synthetic import generate_preset

    root = generate_preset(tmp_path, "micro", seed=11)
    completed = subprocess.run(
        [sys.executable, "-m", "aiv_eval.cli", "trust-table", str(PARAMS), "--dataset", str(root),
         "--set", "verifier.verifier.backend=oracle", "--out", str(tmp_path / "table")],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert completed.returncode == 2
    assert "made with seed 11" in completed.stderr and len(completed.stderr.strip().splitlines()) == 1


#: Claim kinds the exact oracle confirms from the privileged truth of today's generator (an absent logo since
#: the truth records the surface it would be printed on).
ORACLE_CONFIRMS = (
    "main_colour",
    "part_colour",
    "pattern",
    "no_pattern",
    "text",
    "logo",
    "no_logo",
    "material",
)


@pytest.mark.parametrize("key", ["oracle", "noisy_oracle:error_rate=0.1,unsure_rate=0"])
def test_the_shipped_oracle_tables_carry_yes_evidence_for_every_kind_the_oracle_confirms(key: str) -> None:
    """A table fitted before the generator recorded something has no Yes evidence for that claim kind, and then
    every query with such a claim stops UNDECIDED after one view however many views could show it (how a
    table fitted before absence surfaces existed held the robot setting to 0.65 of the ceiling)."""
    from aiv_verifier.evidence_tables import DEFAULT_CALIBRATION_FILE

    table = load_calibration(DEFAULT_CALIBRATION_FILE).backends[key].table
    without = [kind for kind in ORACLE_CONFIRMS if table.strongest(kind, Decision.YES)[0] <= 0.0]
    assert not without, f"the shipped {key} table has no Yes evidence for {without}: refit it"
