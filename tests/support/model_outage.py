"""A model server that dies mid-run (issue 33): the MLLM verifier against the test server, which answers the first
calls and then only fails (HTTP 500, a malformed body, or nothing until the read timeout).

The four-pair colour dataset (``support.colour_dataset``) with a step budget of 3; the model answers every call
"Unsure", so each episode asks three calls (one per step) and answers No at the budget. With
:data:`ANSWERED` = 7 answered requests and one retry per call, the run holds every kind:

- pairs 0 and 1: all calls answered — ``ok``, not degraded;
- pair 2: its first call answered, the other two failed — ``ok`` (scored) and ``degraded``;
- pair 3: every call failed — an infrastructure failure (default ``agent.model_outage: fail``), two attempts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from aiv_models.openai_server import Fault

from support.colour_dataset import INDEX
from support.llm_server import MODEL_NAME

#: Chat requests the server answers before it dies.
ANSWERED = 7
#: What each way of dying looks like to the client (a piece of the failure reason).
FAULTS: dict[str, tuple[Fault, str]] = {
    "http-500": (Fault("status", 500), "HTTP 500"),
    "garbage": (Fault("malformed"), "malformed chat/completions answer"),
    "silence": (Fault("stall", seconds=10.0), "no answer within the read timeout of 0.25 s"),
}
OUTAGE_REASON = "the language model answered none of the episode's 3 call(s)"

PARAMS = """
offline_sim:
  ros__parameters:
    index_file: val/{index}
    max_steps: 3
verifier:
  ros__parameters:
    verifier.backend: mllm
    language_model.transport: openai
    language_model.base_url: {url}
    language_model.model: {model}
    language_model.max_new_tokens: 16
    language_model.read_timeout_s: 0.25
    language_model.retries: 1
evaluator:
  ros__parameters:
    run_dir: {run_dir}
    save_crops: false
"""


def unsure(_request: Any) -> str:
    """The model's answer to every call: it cannot tell (the episode runs to its budget)."""
    return '{"answer": "Unsure", "reason": "cannot tell from here"}'


def outage_params(directory: Path, name: str, url: str) -> Path:
    """A params YAML for ``aiv-eval run`` writing to ``directory/name`` (point it at the colour dataset)."""
    params = directory / f"{name}.yaml"
    params.write_text(PARAMS.format(index=INDEX, url=url, model=MODEL_NAME, run_dir=directory / name))
    return params


def records(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]


def assert_outage_run(run_dir: Path, error: str) -> None:
    """The records and metrics of a default run against a server that died after :data:`ANSWERED` requests."""
    found = records(run_dir)
    assert [r["status"] for r in found] == ["ok", "ok", "ok", "infra_failure", "infra_failure"]
    healthy, degraded, failed = found[:2], found[2], found[3:]
    for record in healthy:
        assert "degraded" not in record and record["model_calls"] == {"verifier": 3}
    assert degraded["degraded"] is True and degraded["prediction"] == "No"
    assert degraded["model_calls"] == {"language_model_failed": 2, "verifier": 3}
    assert [r["attempts"] for r in failed] == [1, 2]  # retried per max_attempts, then reported
    for record in failed:
        reason = record["failure_reason"]
        assert record["prediction"] == "Unsure" and not record["is_correct"] and "degraded" not in record
        assert reason.startswith("the verifier failed (failure): step 2: " + OUTAGE_REASON), reason
        assert error in reason and "\n" not in reason
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["total_episodes"] == 3  # the failed pair is never scored
    assert metrics["infra_failures"]["count"] == 1 and metrics["infra_failures"]["keys"] == [
        found[3]["episode_key"]
    ]
    expected = {"count": 1, "correct": int(degraded["is_correct"]), "keys": [degraded["episode_key"]]}
    assert {key: metrics["degraded_episodes"][key] for key in expected} == expected
    assert metrics["degraded_episodes"]["accuracy"] == float(degraded["is_correct"])
    others = [r["is_correct"] for r in healthy]
    assert metrics["degraded_episodes"]["others_accuracy"] == round(sum(others) / len(others), 4)
