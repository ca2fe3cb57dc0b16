"""The research sweep behind #18's numbers: same episodes as ``aiv-eval``, an audit, and clean CLI errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from aiv_eval.run.in_process import run_in_process
from aiv_studies.episode_sweep import audit_table, distractor_breakdown, perturb
from aiv_studies.episode_sweep import main as sweep_main
from aiv_verifier.claims import CLAIM_KINDS
from support.eval_specs import oracle_veto_spec


def test_sweep_plays_the_same_episodes_as_the_in_process_evaluator(
    tmp_path: Path, micro_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The sweep memoises the classical verifier across fusions; its decisions and steps must still be
    exactly what ``aiv-eval`` records for the same configuration, or its tables would mislead."""
    out = tmp_path / "sweep.json"
    code = sweep_main([
        "--dataset", str(micro_root), "--index", "val/pv_index_all.jsonl", "--fusions", "veto,attr_majority",
        "--stop-rules", "reference", "--audit", "--json", str(out),
    ])  # fmt: skip
    assert code == 0
    result = json.loads(out.read_text())
    assert result["pairs"] == 12 and set(result["runs"]) == {"veto/reference", "attr_majority/reference"}

    for fusion in ("veto", "attr_majority"):
        # The test spec (oracle, veto) switched to the classical verifier and this fusion.
        spec = oracle_veto_spec(
            tmp_path,
            micro_root,
            fusion,
            "verifier.verifier.backend=classical",
            f"verifier.agent.fusion={fusion}",
            "evaluator.save_crops=false",
        )
        run_dir = run_in_process(spec).run_dir
        records = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
        by_index = {r["episode_index"]: r for r in records}
        episodes = result["runs"][f"{fusion}/reference"]["episodes"]
        assert len(episodes) == len(by_index) == 12
        for episode in episodes:
            record = by_index[episode["index"]]
            assert (episode["prediction"], episode["steps"]) == (record["prediction"], record["steps"]), (
                fusion,
                episode["index"],
            )

    rows = result["audit_rows"]
    assert rows and {r["answer"] for r in rows} <= {"Yes", "No", "Unsure"}
    assert {r["truth"] for r in rows} <= {"Yes", "No", "Unsure"}
    assert {r["pair_type"] for r in rows} == {"positive", "neg_same", "neg_diff"}
    judged = result["audit"]
    assert all(0.0 <= entry["decisive_accuracy"] <= 1.0 for entry in judged.values())
    assert "answers given while playing positive pairs" in capsys.readouterr().out
    # Every distractor episode played is counted exactly once.
    neg_same = [e for e in result["runs"]["veto/reference"]["episodes"] if e["pair_type"] == "neg_same"]
    assert sum(result["distractors"].values()) == len(neg_same)


def test_a_perfect_judge_of_every_claim_kind_plays_exactly_the_oracle(
    tmp_path: Path, micro_root: Path
) -> None:
    """``--perfect`` is an upper bound only if it really puts the oracle's answers in place: with every kind
    and every answer replaced, the scenario must decide each episode as ``aiv-eval`` does with the oracle
    verifier; a scenario that replaces only Nos must leave the plain run and the audit untouched."""
    out = tmp_path / "sweep.json"
    every_kind = ",".join(CLAIM_KINDS)
    common = ["--dataset", str(micro_root), "--index", "val/pv_index_all.jsonl", "--fusions", "veto",
              "--stop-rules", "reference", "--audit"]  # fmt: skip
    assert sweep_main([*common, "--perfect", every_kind, "--perfect-answers", "all", "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    scenario = result["runs"][f"veto/reference/perfect:{'+'.join(sorted(CLAIM_KINDS))}"]["episodes"]

    run_dir = run_in_process(
        oracle_veto_spec(tmp_path, micro_root, "oracle", "evaluator.save_crops=false")
    ).run_dir
    records = {
        r["episode_index"]: r for r in map(json.loads, (run_dir / "results.jsonl").read_text().splitlines())
    }
    assert len(scenario) == len(records) == 12
    for episode in scenario:
        record = records[episode["index"]]
        assert (episode["prediction"], episode["steps"]) == (record["prediction"], record["steps"])
    plain = result["runs"]["veto/reference"]["episodes"]
    assert [e["prediction"] for e in plain] != [e["prediction"] for e in scenario]  # the swap did something

    nos_only = tmp_path / "nos.json"
    assert (
        sweep_main([*common, "--perfect", "part_colour", "--perfect", "text,logo", "--json", str(nos_only)])
        == 0
    )
    second = json.loads(nos_only.read_text())
    assert set(second["runs"]) == {
        "veto/reference", "veto/reference/perfect:part_colour", "veto/reference/perfect:logo+text",
    }  # fmt: skip
    assert second["runs"]["veto/reference"] == result["runs"]["veto/reference"]
    assert second["audit_rows"] == result["audit_rows"]
    for label in ("veto/reference/perfect:part_colour", "veto/reference/perfect:logo+text"):
        # Only Nos were added: under veto an episode the plain run rejected stays rejected.
        for before, after in zip(plain, second["runs"][label]["episodes"], strict=True):
            assert before["prediction"] == "Yes" or after["prediction"] == "No", (label, before["index"])


def _row(episode: str, view: str, kind: str, answer: str, truth: str) -> dict[str, str]:
    return {
        "view": f"pin_capture/val/{episode}/{view}",
        "target": "t",
        "pair_type": "neg_same",
        "attribute": kind,
        "type": kind,
        "phrase": "p",
        "answer": answer,
        "truth": truth,
        "reason": "r",
    }


def test_distractor_breakdown_names_what_kept_each_distractor_undecided() -> None:
    rows = [
        _row("a/1", "s0_far", "color", "No", "No"),  # rejected by some view
        _row("a/1", "s2_far", "color", "Unsure", "No"),
        _row("b/1", "s0_far", "color", "Unsure", "No"),  # a colour difference nobody decided
        _row("b/1", "s0_far", "material", "Unsure", "No"),
        _row("c/1", "s0_far", "material", "Unsure", "No"),  # only the material differs
        _row("d/1", "s0_far", "logo_text", "Unsure", "No"),  # only the text differs
        _row("e/1", "s0_far", "shape", "Unsure", "No"),
        _row("f/1", "s0_far", "material", "Unsure", "No"),  # text and material
        _row("f/1", "s2_far", "logo_text", "Yes", "No"),
        _row("g/1", "s0_far", "color", "Yes", "Yes"),  # the difference never showed
        {**_row("h/1", "s0_far", "color", "No", "No"), "pair_type": "positive"},  # not a distractor
    ]
    assert distractor_breakdown(rows) == {
        "some view answered No": 1,
        "colour or pattern differs, undecided": 1,
        "only printed text differs": 1,
        "only material differs": 1,
        "only shape, count or part differs": 1,
        "several non-colour attributes differ": 1,
        "no differing attribute visible": 1,
    }


def test_object_level_nos_are_judged_as_object_claims_beside_the_per_attribute_score() -> None:
    """ "Not the described object", given to every attribute of a distractor that shares some of them, is a
    wrong attribute answer and a right object answer: the table keeps the first score and adds the second."""
    same_material = {**_row("a/1", "s0_far", "material", "No", "Yes"), "claim": "object"}
    other_colour = {**_row("a/1", "s0_far", "color", "No", "No"), "claim": "object"}
    attribute_no = _row("b/1", "s0_far", "color", "No", "Yes")  # a wrong attribute No stays wrong
    unseen = {**_row("c/1", "s0_far", "color", "No", "Unsure"), "claim": "object"}  # judged as a claim only
    on_positive = {**same_material, "pair_type": "positive", "truth": "Yes"}  # the described object: wrong
    old_row = _row("d/1", "s0_far", "color", "Yes", "Yes")  # rows of earlier sweeps carry no claim
    table = audit_table([same_material, other_colour, attribute_no, unseen, on_positive, old_row])["ALL"]
    assert (table["decisive_judged"], table["decisive_accuracy"]) == (5, 2 / 5)
    assert (table["object_claims"], table["judged_as_claimed"], table["accuracy_as_claimed"]) == (4, 6, 4 / 6)


def test_perturbation_is_deterministic_per_capture_and_changes_the_frame() -> None:
    frame = (np.arange(48 * 64 * 3) % 251).astype(np.uint8).reshape(48, 64, 3)
    first = perturb(frame, "all", "episode/3/s4_far")
    assert first.shape == frame.shape and first.dtype == frame.dtype
    assert (first == perturb(frame, "all", "episode/3/s4_far")).all()
    assert not (first == frame).all()
    assert not (first == perturb(frame, "all", "episode/3/s6_far")).all()
    assert perturb(frame, "none", "x") is frame


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--dataset", "{missing}"], "dataset root does not exist"),
        (["--dataset", "{root}", "--index", "val/nope.jsonl"], "nope.jsonl"),
        (["--dataset", "{root}", "--set", "no_such_rule=1"], "unknown parameter 'no_such_rule'"),
        (["--dataset", "{root}", "--set", "identity.min_pixels=many"], "identity.min_pixels"),
        (["--dataset", "{root}", "--set", "region.no_such_key=1"], "unknown parameter 'region.no_such_key'"),
        (["--dataset", "{root}", "--set", "region.white_balance=sepia"], "white_balance must be one of"),
        (["--dataset", "{root}", "--set", "category.enabled=maybe"], "expected true or false"),
        (["--dataset", "{root}", "--perfect", "colour"], "unknown claim kind 'colour'"),
        (["--dataset", "{root}", "--perfect", ","], "(none given)"),
    ],
)
def test_user_mistakes_end_with_one_line_and_exit_status_2(
    tmp_path: Path,
    micro_root: Path,
    capsys: pytest.CaptureFixture[str],
    arguments: list[str],
    message: str,
) -> None:
    filled = [a.format(missing=tmp_path / "missing", root=micro_root) for a in arguments]
    assert sweep_main([*filled, "--limit", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("episode_sweep: error: ") and message in err
    assert len(err.splitlines()) == 1 and "Traceback" not in err


def test_an_audit_without_privileged_ground_truth_is_refused_in_one_line(
    tmp_path: Path, micro_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    copy = tmp_path / "no_gt"
    shutil.copytree(micro_root, copy, ignore=shutil.ignore_patterns("privileged_gt"))
    for extra in (["--audit"], ["--perfect", "part_colour"]):
        args = ["--dataset", str(copy), "--index", "val/pv_index_all.jsonl", *extra, "--limit", "1"]
        assert sweep_main(args) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("episode_sweep: error: ") and "privileged_gt: does not exist" in err
        assert len(err.splitlines()) == 1
