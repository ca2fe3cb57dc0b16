"""A model server that dies mid-run is an infrastructure failure, not a NO (issue 33), in-process over HTTP.

The MLLM verifier calls the OpenAI-compatible test server, which answers seven requests and then only fails:
HTTP 500, a malformed body, or nothing until the read timeout. The pair whose every call failed is recorded as
an infrastructure failure (retried per ``max_attempts``, never scored) and the run ends with exit 1 and a line
naming how many; the pair with some failed calls is scored and flagged ``degraded``, and metrics and report show
those apart. ``agent.model_outage: reference`` keeps the reference's scoring (failed call = Missing) for parity
runs, under another run id; the default adds nothing to the run identity. The ROS evaluation writes the same
records (``tests/ros/test_model_outage_ros.py``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from aiv_eval.cli import main as aiv_eval
from aiv_eval.records.store import read_run_config
from support import offline_models
from support.colour_dataset import build_colour_dataset
from support.llm_server import serving
from support.model_outage import ANSWERED, FAULTS, assert_outage_run, outage_params, records, unsure

no_network = offline_models.no_network  # fixture
pytestmark = pytest.mark.usefixtures("no_network")


@pytest.mark.parametrize("kind", list(FAULTS))
def test_an_episode_whose_every_model_call_failed_is_an_infrastructure_failure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    fault, error = FAULTS[kind]
    root, _ = build_colour_dataset(tmp_path / "data")
    with serving(unsure) as server:
        server.fail_after(ANSWERED, fault)
        params = outage_params(tmp_path, "run", server.url)
        code = aiv_eval(["run", str(params), "--dataset", str(root), "--mode", "inprocess"])
    assert code == 1
    assert_outage_run(tmp_path / "run", error)
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("aiv-eval: ")]
    assert len(lines) == 1 and lines[0].startswith(
        "aiv-eval: 1 episode(s) ended in an infrastructure failure after every attempt and are not scored"
    )
    assert "the language model answered none" in lines[0]


def test_the_reference_scoring_stays_selectable_and_the_report_shows_degraded_episodes(
    tmp_path: Path,
) -> None:
    root, _ = build_colour_dataset(tmp_path / "data")
    with serving(unsure) as server:
        server.fail_after(ANSWERED, FAULTS["http-500"][0])
        params = outage_params(tmp_path, "default", server.url)
        assert aiv_eval(["run", str(params), "--dataset", str(root), "--mode", "inprocess", "--report"]) == 1
        server.fail_after(server.requests_served + ANSWERED, FAULTS["http-500"][0])
        parity = outage_params(tmp_path, "parity", server.url)
        code = aiv_eval([
            "run", str(parity), "--dataset", str(root), "--mode", "inprocess",
            "--set", "verifier.agent.model_outage=reference",
        ])  # fmt: skip
    assert code == 0  # the reference scores every episode: the outage reads as an accuracy drop
    found = records(tmp_path / "parity")
    assert [r["status"] for r in found] == ["ok"] * 4
    assert found[3]["prediction"] == "No" and found[3]["model_calls"] == {
        "language_model_failed": 3,
        "verifier": 3,
    }
    assert [r.get("degraded", False) for r in found] == [False, False, True, True]  # flagged all the same
    metrics = json.loads((tmp_path / "parity" / "metrics.json").read_text())
    assert metrics["degraded_episodes"]["count"] == 2 and metrics["infra_failures"]["count"] == 0

    # The parameter that changes decisions is in the run identity only when it is not the default, so every
    # run id of an existing default configuration stayed what it was.
    default_config = read_run_config(tmp_path / "default")
    parity_config = read_run_config(tmp_path / "parity")
    assert "agent.model_outage" not in default_config.config["verifier"]
    assert parity_config.config["verifier"]["agent.model_outage"] == "reference"
    assert default_config.run_id != parity_config.run_id

    report = (tmp_path / "default" / "report.md").read_text()
    assert "infra failures excluded: 1; scored with failed model calls: 1, accuracy" in report
    html = (tmp_path / "default" / "report.html").read_text()
    assert "Scored episodes with failed model calls" in html


@pytest.mark.parametrize(
    "agent",
    [
        ("verifier.agent.kind=trained",),
        ("verifier.verifier.backend=classical", "verifier.query.backend=llm", "verifier.agent.nbv=llm"),
    ],
    ids=["trained-agent", "llm-query-and-nbv"],
)
def test_every_agent_that_calls_the_model_fails_alike_on_a_dead_server(
    tmp_path: Path, agent: tuple[str, ...]
) -> None:
    """Not only the MLLM verifier: the trained agent's calls and query understanding's count the same way."""
    root, _ = build_colour_dataset(tmp_path / "data")
    with serving(unsure) as server:
        server.fail_after(0, FAULTS["http-500"][0])
        params = outage_params(tmp_path, "run", server.url)
        overrides = [item for setting in agent for item in ("--set", setting)]
        code = aiv_eval(["run", str(params), "--dataset", str(root), "--mode", "inprocess", *overrides])
    assert code == 1
    found = records(tmp_path / "run")
    assert [r["status"] for r in found] == ["infra_failure"] * 8  # four pairs, two attempts each
    for record in found:
        assert "the language model answered none of the episode's" in record["failure_reason"]
        assert "HTTP 500" in record["failure_reason"]
