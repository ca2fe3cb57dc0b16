"""The language-model paths of the agent end to end over HTTP: MV-Attr with the MLLM verifier in the in-process
evaluator (records and metrics.json, failed calls counted, the API key never written anywhere), and LLM query
understanding + LLM-NBV on the same transport."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from aiv_common.setting_tree import nested_config
from aiv_dataset.layout import PInVerifyDataset
from aiv_eval.run.env_port import run_env_episode
from aiv_eval.run.in_process import run_in_process
from aiv_eval.run.spec import EvalSpec
from aiv_offline_sim.environment import PInVerifyEnv
from aiv_offline_sim.episode_service import pair_key
from aiv_verifier.agent.factory import AgentFactory, ConfigError
from aiv_verifier.agent.steps import LANGUAGE_MODEL_FAILED
from support import offline_models, tiny_vlm
from support.colour_dataset import INDEX, build_colour_dataset
from support.llm_server import MODEL_NAME, routed, serving, tiny_vlm_answer

no_network = offline_models.no_network  # fixture
tiny_vlm_dir = tiny_vlm.tiny_vlm_dir  # fixture
pytestmark = [pytest.mark.usefixtures("no_network"), pytest.mark.slow]

KEY_ENV = "AIV_TEST_LLM_KEY"
SECRET = "sk-aiv-test-3f9c1e7d55b2"
PARAMS = """
offline_sim:
  ros__parameters:
    index_file: val/{index}
verifier:
  ros__parameters:
    verifier.backend: mllm
    language_model.transport: openai
    language_model.base_url: {url}
    language_model.model: {model}
    language_model.api_key_env: {key_env}
    language_model.max_new_tokens: 16
evaluator:
  ros__parameters:
    run_dir: {run_dir}
"""


def _run(tmp_path: Path, root: Path, url: str, name: str, *overrides: str) -> Path:
    params = tmp_path / f"{name}.yaml"
    params.write_text(
        PARAMS.format(index=INDEX, url=url, model=MODEL_NAME, key_env=KEY_ENV, run_dir=tmp_path / name)
    )
    spec = EvalSpec.load(params, list(overrides))
    spec.set_dataset(str(root))
    return run_in_process(spec).run_dir


def _files_containing(root: Path, needle: bytes) -> list[Path]:
    return [path for path in root.rglob("*") if path.is_file() and needle in path.read_bytes()]


def test_mv_attr_over_http_records_metrics_and_never_writes_the_key(
    tiny_vlm_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    root, records = build_colour_dataset(tmp_path / "data")
    monkeypatch.setenv(KEY_ENV, SECRET)
    with serving(tiny_vlm_answer(tiny_vlm_dir), api_key=SECRET) as server:
        good = _run(tmp_path, root, server.url, "good")
        served = server.requests_served
    results = [json.loads(line) for line in (good / "results.jsonl").read_text().splitlines()]
    assert len(results) == len(records) == 4
    for result in results:  # the verdict follows the image
        assert result["prediction"] == ("Yes" if result["pair_type"] == "positive" else "No"), result
    metrics = json.loads((good / "metrics.json").read_text())
    assert metrics["model_calls"]["totals"]["verifier"] == served == 4  # one view, one attribute each
    assert LANGUAGE_MODEL_FAILED not in metrics["model_calls"]["totals"]

    with serving(tiny_vlm_answer(tiny_vlm_dir), api_key="another-key") as refusing:
        # The start-up check refuses a server that will not answer, naming it, before any episode runs.
        with pytest.raises(ConfigError, match=r"answered HTTP 401.*check_server") as refused_at_start:
            _run(tmp_path, root, refusing.url, "checked", "verifier.agent.nbv=llm")
        assert "\n" not in str(refused_at_start.value) and SECRET not in str(refused_at_start.value)
        assert not (tmp_path / "checked" / "results.jsonl").exists()
        probes = refusing.requests_served
        assert probes == 1  # /v1/models answered 401: one one-token probe, once for the whole run
        # Started anyway: every call (per-view and LLM-NBV) answers HTTP 401, which is not retried. Under the
        # reference's scoring (agent.model_outage: reference) every episode is scored; by default each is an
        # infrastructure failure (tests/evaluation/test_model_outage.py).
        failed = _run(
            tmp_path,
            root,
            refusing.url,
            "refused",
            "verifier.agent.nbv=llm",
            "verifier.language_model.check_server=false",
            "verifier.agent.model_outage=reference",
        )
        refused = refusing.requests_served - probes
    results = [json.loads(line) for line in (failed / "results.jsonl").read_text().splitlines()]
    assert all(r["prediction"] == "No" and r["degraded"] for r in results)  # all Missing: the tie ⇒ No
    totals = json.loads((failed / "metrics.json").read_text())["model_calls"]["totals"]
    assert totals["llm_nbv"] > 0 and totals["verifier"] > 4  # every view asked, every move asked
    assert totals[LANGUAGE_MODEL_FAILED] == totals["verifier"] + totals["llm_nbv"] == refused
    for r in results:
        calls = r["model_calls"]
        assert calls[LANGUAGE_MODEL_FAILED] == calls["verifier"] + calls["llm_nbv"]

    output = capfd.readouterr()
    assert SECRET not in output.out and SECRET not in output.err
    assert _files_containing(tmp_path, SECRET.encode()) == []
    assert _files_containing(good, KEY_ENV.encode())  # the variable's name is recorded, its value never


def test_llm_query_understanding_and_llm_nbv_on_the_http_transport(
    tiny_vlm_dir: Path, tmp_path: Path
) -> None:
    root, _ = build_colour_dataset(tmp_path / "data")
    # Two attributes that a red mug answers Yes and No: the first view is not unanimous, so NBV is asked.
    extract = json.dumps(
        {
            "attributes": [
                {"name": "color", "type": "color", "weight": 3, "evidence_phrase": "red"},
                {"name": "body_color", "type": "color", "weight": 2, "evidence_phrase": "blue"},
            ]
        }
    )
    navigation = '{"per_direction_analysis": {}, "chosen_direction": "Back", "why": "the far side"}'
    answer = routed(
        tiny_vlm_answer(tiny_vlm_dir), {"category": "mug", "extract": extract, "navigation": navigation}
    )
    with serving(answer) as server:
        params = {
            "verifier.backend": "mllm",
            "query.backend": "llm",
            "agent.nbv": "llm",
            "language_model.transport": "openai",
            "language_model.base_url": server.url,
            "language_model.model": MODEL_NAME,
            "language_model.max_new_tokens": 64,
        }
        factory = AgentFactory.from_config(nested_config(params))
        dataset = PInVerifyDataset(root)
        records = dataset.read_pair_index(f"val/{INDEX}")
        env = PInVerifyEnv(records, dataset, privileged=True, descriptions=dataset.load_descriptions())
        session, trace, summary = run_env_episode(env, 0, factory, episode_key=pair_key(records[0]))
    assert session.query.category == "mug"
    assert [(a.name, a.evidence_phrase) for a in session.query.attributes] == [
        ("color", "red"),
        ("body_color", "blue"),
    ]
    first = trace.entries[0].step
    assert [row.last_answer for row in first.attributes] == ["Yes", "No"]  # the tiny VLM on the red crop
    assert (
        first.move is not None
        and first.move.direction == "back"
        and first.move.reason == "llm: model chose back"
    )
    assert first.move.debug["response"] == navigation
    assert summary.steps >= 2 and LANGUAGE_MODEL_FAILED not in session.model_calls
    assert session.model_calls["llm_nbv"] == summary.steps - 1
