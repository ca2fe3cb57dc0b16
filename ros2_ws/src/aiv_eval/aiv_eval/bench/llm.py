"""``aiv-eval bench-llm``: what orchestration alone gains with a served model, measured in one invocation.

The reference talks to its model server one call at a time, one episode at a time: with the MLLM verifier
that is one call per attribute per view, each waiting for the last. This product issues the calls of a view
concurrently (``language_model.max_concurrency``) and keeps several episodes in flight
(``evaluator.episodes_in_flight``); a batching GPU server answers concurrent requests in about the time of
one. To time the orchestration and nothing else, the model's cost is made known and constant:

1. the OpenAI-compatible test server (:mod:`aiv_models.openai_server`) computes every distinct answer once,
   with the tiny model from ``--model-dir`` (loaded once for the whole run) or, without one, with a
   deterministic answer function; that pass is the **model compute**, reported on its own;
2. the server then replays those answers with a fixed latency L per call (150 ms by default, slept in the
   request's own thread, so concurrent requests overlap as on a batching server);
3. the same slice is evaluated in-process twice against it: the reference's sequential pattern
   (``max_concurrency=1``, one episode at a time) and this product's (``max_concurrency`` = calls of a view ×
   episodes, ``episodes_in_flight``). Their decisions must be identical to each other and to the compute pass;
   the command says so and exits 1 when they are not.

Wall time per episode is the evaluation loop's own (``wall_time_s`` of each run's metrics.json), so start-up
and the model compute are outside it. All figures come from this one run; nothing is assumed.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from aiv_models.chat.images import pixel_digest
from aiv_models.chat.types import ChatRequest

from ..run.spec import EvalSpec

AnswerFunction = Callable[[ChatRequest], str]

SERVED_NAME = "aiv-bench-llm"
PATTERNS = ("compute", "sequential", "concurrent")
DECISION_FIELDS = ("episode_key", "status", "prediction", "steps", "first_view_prediction")


def deterministic_answer(request: ChatRequest) -> str:
    """A verification answer that depends only on the request (prompt and pixels): Yes, No or Unsure."""
    material = request.prompt + "|" + "|".join(pixel_digest(image) for image in request.images)
    choice = hashlib.sha256(material.encode("utf-8")).digest()[0] % 5
    verdict = ("Yes", "Yes", "No", "Unsure", "Yes")[choice]
    return json.dumps({"answer": verdict, "reason": "deterministic bench answer"})


class TimedAnswer:
    """Wraps the answer function to add up the time the model itself spends (the model compute)."""

    def __init__(self, answer: AnswerFunction) -> None:
        self.answer = answer
        self.seconds = 0.0
        self.calls = 0
        self._lock = threading.Lock()

    def __call__(self, request: ChatRequest) -> str:
        started = time.perf_counter()
        text = self.answer(request)
        with self._lock:
            self.seconds += time.perf_counter() - started
            self.calls += 1
        return text


@dataclass(frozen=True)
class PatternRun:
    """One evaluation of the slice against the server, as the report reads it."""

    name: str
    episodes: int
    steps: int
    verifier_calls: int
    loop_s: float
    peak_requests_in_flight: int
    decisions: tuple[tuple[Any, ...], ...]

    @property
    def seconds_per_episode(self) -> float:
        return self.loop_s / self.episodes if self.episodes else float("nan")


def _read_run(name: str, run_dir: Path, peak: int) -> PatternRun:
    lines = (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]  # index order, whatever ran in parallel
    ok = [record for record in records if record["status"] == "ok"]
    metrics = json.loads((run_dir / "metrics.json").read_text(encoding="utf-8"))
    decisions = tuple(
        (
            *[record.get(field) for field in DECISION_FIELDS],
            [step.get("nav_rel") for step in record.get("transcript") or []],
        )
        for record in records
    )
    return PatternRun(
        name=name,
        episodes=len(records),
        steps=sum(int(record["steps"]) for record in ok),
        verifier_calls=sum(int(record.get("model_calls", {}).get("verifier", 0)) for record in ok),
        loop_s=float(metrics.get("wall_time_s") or 0.0),
        peak_requests_in_flight=peak,
        decisions=decisions,
    )


def _spec(
    params: Path, overrides: Sequence[str], run_dir: Path, calls_in_flight: int, episodes_in_flight: int
) -> EvalSpec:
    return EvalSpec.load(
        params,
        [
            *overrides,
            f"verifier.language_model.max_concurrency={calls_in_flight}",
            f"evaluator.episodes_in_flight={episodes_in_flight}",
            f"evaluator.run_dir={run_dir}",
        ],
    )


def format_report(
    runs: dict[str, PatternRun],
    timed: TimedAnswer,
    latency_s: float,
    identical: bool,
    recomputed: int,
    model: str,
) -> str:
    sequential, concurrent = runs["sequential"], runs["concurrent"]
    calls_per_step = sequential.verifier_calls / sequential.steps if sequential.steps else float("nan")
    rows = [
        ("episodes", f"{sequential.episodes}", f"{concurrent.episodes}"),
        ("steps", f"{sequential.steps}", f"{concurrent.steps}"),
        ("model calls", f"{sequential.verifier_calls}", f"{concurrent.verifier_calls}"),
        ("evaluation loop (s)", f"{sequential.loop_s:.2f}", f"{concurrent.loop_s:.2f}"),
        (
            "wall time per episode (s)",
            f"{sequential.seconds_per_episode:.3f}",
            f"{concurrent.seconds_per_episode:.3f}",
        ),
        (
            "peak requests in flight",
            f"{sequential.peak_requests_in_flight}",
            f"{concurrent.peak_requests_in_flight}",
        ),
    ]
    lines = [
        f"model: {model}; replayed with a fixed latency of {latency_s * 1000:.0f} ms per call",
        f"model calls per step (attributes per view): {calls_per_step:.2f}",
        "",
        "| measure | reference pattern (sequential) | concurrent calls + episodes in flight |",
        "|---|---|---|",
        *[f"| {name} | {a} | {b} |" for name, a, b in rows],
        "",
    ]
    ratio = (
        sequential.seconds_per_episode / concurrent.seconds_per_episode
        if concurrent.seconds_per_episode > 0
        else float("nan")
    )
    lines.append(f"speed-up per episode (sequential / concurrent): {ratio:.2f}x")
    floor = calls_per_step * latency_s
    lines.append(
        f"sequential floor per step (calls x latency): {floor * 1000:.0f} ms; measured "
        f"{1000 * sequential.loop_s / max(sequential.steps, 1):.0f} ms per step"
    )
    if sequential.verifier_calls:
        overhead = (sequential.loop_s - sequential.verifier_calls * latency_s) / sequential.verifier_calls
        lines.append(
            f"time per call beyond the model's latency, sequential (image encoding, HTTP, agent): "
            f"{overhead * 1000:.0f} ms"
        )
    per_answer = timed.seconds / timed.calls if timed.calls else float("nan")
    lines.append(
        f"model compute (separate, once): {timed.calls} distinct answers in {timed.seconds:.2f} s "
        f"({per_answer * 1000:.1f} ms per answer)"
    )
    lines.append(f"answers recomputed during the timed runs: {recomputed}")
    lines.append(f"identical decisions in all runs: {'yes' if identical else 'NO'}")
    return "\n".join(lines)


def bench_llm(
    params: Path,
    overrides: Sequence[str],
    out: Path,
    *,
    dataset: str | None = None,
    model_dir: str = "",
    latency_s: float = 0.150,
    episodes_in_flight: int = 8,
    calls_per_view: int = 8,
    stream: TextIO | None = None,
) -> tuple[str, bool]:
    """Run the three passes into ``out``; returns the printed report and whether every decision was identical."""
    if latency_s < 0:
        raise ValueError(f"latency must be >= 0, got {latency_s}")
    if episodes_in_flight < 1 or calls_per_view < 1:
        raise ValueError("episodes in flight and calls per view must be >= 1")
    for name in PATTERNS:
        if (out / name / "results.jsonl").exists():
            raise FileExistsError(f"{out / name} holds an earlier run; pass an empty --out directory")
    out.mkdir(parents=True, exist_ok=True)
    from aiv_models.openai_server import OpenAICompatibleServer, transformers_answer

    from ..run.in_process import run_in_process

    progress = stream if stream is not None else io.StringIO()
    timed = TimedAnswer(transformers_answer(model_dir) if model_dir else deterministic_answer)
    model = f"tiny model {model_dir}" if model_dir else "deterministic answer function (no --model-dir)"
    server = OpenAICompatibleServer(timed, model_name=SERVED_NAME, replay=True).start()
    try:
        base = [
            *overrides,
            "verifier.verifier.backend=mllm",
            "verifier.language_model.transport=openai",
            f"verifier.language_model.base_url={server.url}",
            f"verifier.language_model.model={SERVED_NAME}",
            "evaluator.write_report=false",
            "evaluator.save_crops=false",
        ]
        if dataset:
            base += [f"offline_sim.dataset_root={dataset}"]
        concurrent_calls = calls_per_view * episodes_in_flight
        plan = {
            "compute": (concurrent_calls, episodes_in_flight),
            "sequential": (1, 1),
            "concurrent": (concurrent_calls, episodes_in_flight),
        }
        runs: dict[str, PatternRun] = {}
        computed_before_timing = 0
        for name, (calls, in_flight) in plan.items():
            if name == "sequential":  # every answer exists now: from here on the model costs exactly L
                server.latency_s = latency_s
                computed_before_timing = server.answers_computed
            server.peak_in_flight = 0
            run_in_process(_spec(params, base, out / name, calls, in_flight), stream=progress)
            runs[name] = _read_run(name, out / name, server.peak_in_flight)
        recomputed = server.answers_computed - computed_before_timing
    finally:
        server.stop()
    reference = runs["compute"].decisions
    identical = all(run.decisions == reference for run in runs.values())
    return format_report(runs, timed, latency_s, identical, recomputed, model), identical


def add_llm_bench_subcommand(sub: Any) -> None:
    """Register ``bench-llm`` on ``aiv-eval``'s sub-command parsers."""
    parser = sub.add_parser(
        "bench-llm",
        help="time the reference's sequential model calls against concurrent calls + episodes in flight",
    )
    parser.add_argument("params", help="params YAML with offline_sim / verifier / evaluator sections")
    parser.add_argument("--dataset", help="dataset root (overrides the YAML)")
    parser.add_argument("--set", action="append", metavar="NODE.PARAM=VALUE", help="override one parameter")
    parser.add_argument("--out", help="empty directory for the runs (default runs/bench-llm/<time>)")
    parser.add_argument("--model-dir", default="", help="local tiny VLM that computes the answers once")
    parser.add_argument("--latency-ms", type=float, default=150.0, help="fixed model latency per call (150)")
    parser.add_argument("--episodes-in-flight", type=int, default=8, help="episodes at once (8)")
    parser.add_argument("--calls-per-view", type=int, default=8, help="concurrent calls per view (8)")
    parser.set_defaults(func=_command)


def _command(args: argparse.Namespace) -> int:
    out = Path(args.out) if args.out else Path("runs") / "bench-llm" / time.strftime("%Y%m%d-%H%M%S")
    report, identical = bench_llm(
        Path(args.params),
        list(args.set or []),
        out,
        dataset=args.dataset,
        model_dir=args.model_dir,
        latency_s=args.latency_ms / 1000.0,
        episodes_in_flight=args.episodes_in_flight,
        calls_per_view=args.calls_per_view,
        stream=sys.stderr,
    )
    print(report)
    print(f"runs: {out}")
    return 0 if identical else 1


__all__ = [
    "PatternRun",
    "TimedAnswer",
    "add_llm_bench_subcommand",
    "bench_llm",
    "deterministic_answer",
    "format_report",
]
