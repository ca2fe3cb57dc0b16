"""A model server that dies mid-run, over ROS (issue 33): never a NO.

- the robot path: a VerifyInstance goal served by the verifier node (MLLM verifier, its model behind the
  OpenAI-compatible test server) whose every model call fails ends ``DECISION_FAILED`` with the cause, and the
  node keeps serving; one with some failed calls is answered and its verdict counts them; with
  ``agent.model_outage: reference`` the same dead server gets the reference's NO;
- ``aiv-eval run --mode ros`` records the dying server exactly as the in-process mode does: byte-identical
  ``results.jsonl`` (the failed pair an infrastructure failure, retried, unscored; the pair with some failed
  calls scored and flagged) and the same non-zero exit.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from aiv_eval.cli import main as aiv_eval
from aiv_eval.run.episode_client import EpisodeRequest, RosEpisodeClient
from aiv_interfaces.msg import Verdict
from aiv_models.openai_server import Fault
from aiv_verifier.verdict_codes import model_calls_from_timings
from support import offline_models
from support.colour_dataset import INDEX, build_colour_dataset
from support.llm_server import MODEL_NAME, serving
from support.model_outage import ANSWERED, FAULTS, OUTAGE_REASON, assert_outage_run, outage_params, unsure

no_network = offline_models.no_network  # fixture
pytestmark = pytest.mark.usefixtures("no_network")

REPO_ROOT = Path(__file__).resolve().parents[2]
INSTALL = REPO_ROOT / "ros2_ws" / "install"
SIM_EXECUTABLE = INSTALL / "aiv_offline_sim" / "lib" / "aiv_offline_sim" / "offline_sim"
VERIFIER_EXECUTABLE = INSTALL / "aiv_verifier" / "lib" / "aiv_verifier" / "verifier"
VERIFIER_PARAMS = INSTALL / "aiv_verifier" / "share" / "aiv_verifier" / "config" / "verifier.yaml"
DEAD = Fault("status", 500)


def _args(params: dict[str, object]) -> list[str]:
    argv: list[str] = []
    for name, value in params.items():
        argv += ["-p", f"{name}:={value}"]
    return argv


def _verifier(node_process, url: str, **extra: object):
    params = {
        "verifier.backend": "mllm",
        "language_model.transport": "openai",
        "language_model.base_url": url,
        "language_model.model": MODEL_NAME,
        "language_model.max_new_tokens": 16,
        "language_model.retries": 1,
        **extra,
    }
    argv = [str(VERIFIER_EXECUTABLE), "--ros-args", "--params-file", str(VERIFIER_PARAMS), *_args(params)]
    return node_process(argv, name="verifier")


def test_a_goal_whose_every_model_call_failed_is_failed_not_no(ros_executor, node_process, tmp_path) -> None:
    root, _ = build_colour_dataset(tmp_path / "data")
    sim_params = {
        "dataset_root": root,
        "index_file": f"val/{INDEX}",
        "privileged_output": "true",
        "max_steps": 3,
    }
    sim = node_process([str(SIM_EXECUTABLE), "--ros-args", *_args(sim_params)], name="sim")
    with serving(unsure) as server:
        # Dead from the first call (its model list still answers the start-up check).
        server.fail_after(0, DEAD)
        verifier = _verifier(node_process, server.url)
        client = ros_executor.spin_new("episode_client", RosEpisodeClient)
        client.wait_for_servers(timeout_s=60.0)

        failed = client.run(EpisodeRequest(index=0)).verdict
        assert failed.decision == Verdict.DECISION_FAILED and failed.stop_reason == "failure"
        assert failed.failure_reason.startswith(f"step 2: {OUTAGE_REASON} (last error: HTTP 500"), failed
        assert "\n" not in failed.failure_reason
        assert failed.steps == 3 and len(failed.transcript) == 3  # the steps taken are kept

        # Some calls answered: the verdict stands (No: every answer was Unsure) and counts the failed ones.
        server.fail_after(server.requests_served + 1, DEAD)
        partial = client.run(EpisodeRequest(index=1)).verdict
        assert partial.decision == Verdict.DECISION_NO, partial.failure_reason
        assert model_calls_from_timings(partial.timings) == {"language_model_failed": 2, "verifier": 3}
        verifier.assert_running()
        verifier.stop()

        # The reference's scoring, by name: the dead server's episode is answered NO.
        server.fail_after(0, DEAD)
        reference = _verifier(node_process, server.url, **{"agent.model_outage": "reference"})
        client.wait_for_servers(timeout_s=60.0)
        parity = client.run(EpisodeRequest(index=2)).verdict
        assert parity.decision == Verdict.DECISION_NO and not parity.failure_reason
        assert model_calls_from_timings(parity.timings) == {"language_model_failed": 3, "verifier": 3}
        reference.assert_running()
    sim.assert_running()


def test_both_evaluation_modes_record_a_dying_server_identically(tmp_path: Path) -> None:
    root, _ = build_colour_dataset(tmp_path / "data")
    fault, error = FAULTS["http-500"]
    with serving(unsure) as server:  # one server (one URL, so one run id), revived and killed again per run
        server.fail_after(ANSWERED, fault)
        ros = outage_params(tmp_path, "ros", server.url)
        ros_code = aiv_eval(["run", str(ros), "--dataset", str(root), "--mode", "ros"])
        server.fail_after(server.requests_served + ANSWERED, fault)
        in_process = outage_params(tmp_path, "inprocess", server.url)
        ip_code = aiv_eval(["run", str(in_process), "--dataset", str(root), "--mode", "inprocess"])
    logs = "\n".join(p.read_text(errors="replace") for p in sorted((tmp_path / "ros" / "logs").glob("*.log")))
    assert (ros_code, ip_code) == (1, 1), logs
    assert (tmp_path / "ros" / "results.jsonl").read_bytes() == (
        tmp_path / "inprocess" / "results.jsonl"
    ).read_bytes()
    assert_outage_run(tmp_path / "ros", error)
    metrics = [json.loads((tmp_path / name / "metrics.json").read_text()) for name in ("ros", "inprocess")]
    for item in metrics:
        item.pop("wall_time_s", None)
    assert metrics[0] == metrics[1]
