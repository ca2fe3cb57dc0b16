"""``aiv-eval bench``: what the ROS path costs over the in-process path, measured in one invocation.

Both modes evaluate the same params file and slice into fresh run dirs under ``--out``:

- in-process in a child process (so its peak memory is its own, read from ``wait4`` like the nodes');
- over ROS with the simulator, verifier and evaluator as three processes (``ros_mode.RosEvaluation``);
- over ROS again with N simulator + verifier pairs driven by one evaluator (``evaluator.pairs``; N from
  ``--pairs``, by default ``make demo``'s rule, :func:`aiv_eval.run.pairs.demo_pair_count`), which is what the main job
  runs on a machine with N cores: its wall time and episodes per second beside the one-pair run's.

Memory: each process's peak RSS from the kernel (``wait4``, exact) and the peak PSS of its whole process tree
(the process and its children, shared library pages split between the processes that map them; sampled every
0.1 s by :class:`.memory.PssSampler`, so a shorter peak can be missed). PSS is the figure a memory budget is set
in, since the three nodes share most of their libraries.

Loop time is the evaluator's own ``wall_time_s`` (from the first episode to the last, without process start-up
and model loading, which are reported separately), so the per-step figures compare like with like. The step
count comes from the records, which must be identical in both modes; the command says so if they are not.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..run.pairs import demo_pair_names
from ..run.ros_mode import ManagedNode, RosEvaluation
from ..run.spec import EvalSpec
from .memory import PssSampler
from .stage_times import format_breakdown, read_stage_seconds


@dataclass(frozen=True)
class ModeTiming:
    mode: str
    episodes: int
    steps: int
    loop_s: float
    total_s: float
    peak_rss_mib: dict[str, float]
    exit_code: int | None
    #: The verifier's model calls over the ok episodes (OCR passes for the classical backend): a memory figure
    #: means little for a run that never loaded the OCR models.
    verifier_calls: int = 0
    #: Peak PSS of each process's tree (the process and its children), sampled; absent names were not seen.
    peak_pss_mib: dict[str, float] = field(default_factory=dict)
    #: The stage sums from the run's log (:mod:`.stage_times`); empty when its log has none.
    stage_seconds: dict[str, float] = field(default_factory=dict)

    @property
    def episodes_per_s(self) -> float:
        return self.episodes / self.loop_s if self.loop_s > 0 else float("nan")

    @property
    def ms_per_step(self) -> float:
        return 1000.0 * self.loop_s / self.steps if self.steps else float("nan")


def _timing(
    mode: str,
    run_dir: Path,
    total_s: float,
    peaks: dict[str, float],
    code: int | None,
    pss: dict[str, float] | None = None,
    log: Path | None = None,
) -> ModeTiming:
    lines = (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    ok = [record for record in records if record["status"] == "ok"]
    metrics = json.loads((run_dir / "metrics.json").read_text(encoding="utf-8"))
    return ModeTiming(
        mode=mode,
        episodes=len(ok),
        steps=sum(int(record["steps"]) for record in ok),
        verifier_calls=sum(int((record.get("model_calls") or {}).get("verifier", 0)) for record in ok),
        loop_s=float(metrics.get("wall_time_s") or 0.0),
        total_s=total_s,
        peak_rss_mib=peaks,
        exit_code=code,
        peak_pss_mib=dict(pss or {}),
        stage_seconds=read_stage_seconds(log) if log is not None else {},
    )


def run_in_process_child(params: Path, overrides: list[str], run_dir: Path, log: Path) -> ModeTiming:
    argv = [sys.executable, "-m", "aiv_eval.cli", "run", str(params), "--mode", "inprocess"]
    for item in [*overrides, f"evaluator.run_dir={run_dir}"]:
        argv += ["--set", item]
    child = ManagedNode("inprocess", argv, log, dict(os.environ))
    name = "aiv-eval (in-process)"
    started = time.perf_counter()
    child.start()
    with PssSampler(lambda: {name: _running_pid(child)}) as sampler:
        code = child.wait(timeout_s=24 * 3600.0)
    total = time.perf_counter() - started
    return _timing(
        "in-process", run_dir, total, {name: child.peak_rss_kib / 1024.0}, code, sampler.peak_mib(), log
    )


def _running_pid(node: ManagedNode) -> int | None:
    """The node's pid while it runs (a reaped pid may already belong to another process)."""
    return node.pid if node.returncode is None else None


def run_ros(spec: EvalSpec, log: Path, *, record_bags: bool = False, label: str = "") -> ModeTiming:
    """One ROS run; ``label`` tells its processes apart from another run's in the memory table."""
    evaluation = RosEvaluation(spec, evaluator_output=log, record_bags=record_bags)
    nodes = evaluation.nodes
    with PssSampler(lambda: {name: _running_pid(node) for name, node in nodes.items()}) as sampler:
        result = evaluation.run()
    mode = "ROS + bags" if record_bags else "ROS"

    def named(peaks: dict[str, float]) -> dict[str, float]:
        return {f"{name} ({label})" if label else name: peak for name, peak in peaks.items()}

    return _timing(
        f"{mode} {label}".strip(),
        result.run_dir,
        result.wall_s,
        named(result.peak_rss_mib),
        result.evaluator_exit_code,
        named(sampler.peak_mib()),
        log,
    )


def recording_report(ros: ModeTiming, recorded: ModeTiming, bags_dir: Path) -> list[str]:
    """What recording costs: time per step against the same ROS run without it, bag sizes, replay speed."""
    bags = sorted(path.parent for path in bags_dir.rglob("metadata.yaml"))
    sizes = [sum(file.stat().st_size for file in bag.iterdir()) for bag in bags]
    lines = [
        "",
        f"record overhead per step (ROS + bags vs ROS): {recorded.ms_per_step - ros.ms_per_step:+.1f} ms "
        f"({recorded.ms_per_step:.1f} vs {ros.ms_per_step:.1f} ms per step)",
        f"peak RSS of the recorder: {recorded.peak_rss_mib.get('recorder', float('nan')):.0f} MiB",
    ]
    if sizes:
        lines.append(
            f"bags: {len(bags)} complete, {sum(sizes) / 1e6:.1f} MB in all, {sum(sizes) / len(sizes) / 1e6:.2f} MB "
            f"per episode (min {min(sizes) / 1e6:.2f}, max {max(sizes) / 1e6:.2f}), "
            f"{sum(sizes) / max(recorded.steps, 1) / 1e6:.2f} MB per step"
        )
    try:
        from aiv_bags_ros.replay import replay_bag
    except ImportError:  # pragma: no cover - the package is part of the workspace
        return lines
    started = time.perf_counter()
    frames = identical = 0
    for bag in bags:
        report = replay_bag(bag)
        frames += sum(episode.replayed_steps for episode in report.episodes)
        identical += report.identical
    seconds = time.perf_counter() - started
    lines.append(
        f"open-loop replay (aiv-bag replay, in-process): {frames} frames in {seconds:.2f} s = "
        f"{frames / max(seconds, 1e-9):.1f} frames/s (bag reading, configuration and agent included); "
        f"{identical} of {len(bags)} bags identical to the recording"
    )
    return lines


def format_report(
    inproc: ModeTiming,
    ros: ModeTiming,
    identical: bool,
    pairs: ModeTiming | None = None,
    pair_count: int = 1,
    pairs_identical: bool = True,
) -> str:
    """The printed comparison; ``pairs``: the ROS run with ``pair_count`` pairs (a fourth column and its lines)."""
    runs = [inproc, ros, *([pairs] if pairs is not None else [])]

    def row(name: str, shown: Callable[[ModeTiming], str]) -> tuple[str, ...]:
        return (name, *(shown(run) for run in runs))

    rows = [
        row("episodes answered", lambda run: f"{run.episodes}"),
        row("steps", lambda run: f"{run.steps}"),
        row("verifier model calls (OCR passes)", lambda run: f"{run.verifier_calls}"),
        row("evaluation loop (s)", lambda run: f"{run.loop_s:.2f}"),
        row("whole command incl. start-up (s)", lambda run: f"{run.total_s:.2f}"),
        row("episodes per second", lambda run: f"{run.episodes_per_s:.3f}"),
        row("ms per step", lambda run: f"{run.ms_per_step:.1f}"),
    ]
    header = ["measure", "in-process", "ROS (3 nodes)"]
    if pairs is not None:
        header.append(f"ROS, {pair_count} pairs ({2 * pair_count + 1} nodes)")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cells) + " |" for cells in rows]
    lines.append("")
    lines.append("| process | peak RSS (MiB) | peak PSS of its process tree (MiB, sampled) |")
    lines.append("|---|---|---|")
    pss = {name: peak for run in runs for name, peak in run.peak_pss_mib.items()}
    for name, peak in {name: peak for run in runs for name, peak in run.peak_rss_mib.items()}.items():
        tree = f"{pss[name]:.0f}" if name in pss else "n/a"
        lines.append(f"| {name} | {peak:.0f} | {tree} |")
    lines.append("")
    ratio = ros.ms_per_step / inproc.ms_per_step if inproc.ms_per_step else float("nan")
    lines.append(f"ROS / in-process time per step: {ratio:.2f}x")
    lines.append(f"ROS overhead per step: {ros.ms_per_step - inproc.ms_per_step:+.1f} ms")
    lines += format_breakdown(ros.stage_seconds, inproc.stage_seconds, ros.ms_per_step - inproc.ms_per_step)
    lines.append(f"identical results.jsonl in both modes: {'yes' if identical else 'NO'}")
    if pairs is not None:
        speed_up = pairs.episodes_per_s / ros.episodes_per_s if ros.episodes_per_s else float("nan")
        lines.append(
            f"main job over ROS, 1 pair vs {pair_count} pairs: evaluation loop {ros.loop_s:.2f} s vs "
            f"{pairs.loop_s:.2f} s, whole command {ros.total_s:.2f} s vs {pairs.total_s:.2f} s, "
            f"{ros.episodes_per_s:.3f} vs {pairs.episodes_per_s:.3f} episodes/s"
        )
        lines.append(f"{pair_count} pairs / 1 pair episodes per second: {speed_up:.2f}x")
        lines.append(
            f"identical results.jsonl with 1 and {pair_count} pairs: {'yes' if pairs_identical else 'NO'}"
        )
    elif pair_count <= 1:
        lines.append("pairs: 1 (one CPU core or --pairs 1): no run with more pairs")
    codes = [run.exit_code for run in runs]
    if any(codes):
        shown = f"in-process {inproc.exit_code}, ROS evaluator {ros.exit_code}"
        if pairs is not None:
            shown += f", ROS evaluator with {pair_count} pairs {pairs.exit_code}"
        lines.append(f"exit codes: {shown}")
    return "\n".join(lines)


def bench(
    params: Path,
    overrides: list[str],
    out: Path,
    dataset: str | None = None,
    record_bags: bool = False,
    pairs: int = 1,
) -> tuple[str, bool]:
    """Run both modes (and ROS with ``pairs`` pairs when above 1) into ``out``; returns the printed report and
    whether every run's results were identical."""
    out.mkdir(parents=True, exist_ok=True)
    overrides = [*overrides, "evaluator.write_report=false"]
    if dataset:
        overrides += [f"offline_sim.dataset_root={dataset}", f"verifier.verifier.dataset_root={dataset}"]
    for name in ("inprocess", "ros", "ros-pairs", "ros-bags"):
        if (out / name / "results.jsonl").exists():
            raise FileExistsError(f"{out / name} holds an earlier run; pass an empty --out directory")
    inproc = run_in_process_child(params, overrides, out / "inprocess", out / "inprocess.log")
    spec = EvalSpec.load(params, [*overrides, f"evaluator.run_dir={out / 'ros'}"])
    ros = run_ros(spec, out / "ros-evaluator.log")
    identical = (out / "inprocess" / "results.jsonl").read_bytes() == (
        out / "ros" / "results.jsonl"
    ).read_bytes()
    paired = None
    pairs_identical = True
    if pairs > 1:
        names = ",".join(demo_pair_names(pairs))
        spec = EvalSpec.load(
            params, [*overrides, f"evaluator.run_dir={out / 'ros-pairs'}", f"evaluator.pairs={names}"]
        )
        paired = run_ros(spec, out / "ros-pairs-evaluator.log", label=f"{pairs} pairs")
        pairs_identical = (out / "ros-pairs" / "results.jsonl").read_bytes() == (
            out / "ros" / "results.jsonl"
        ).read_bytes()
    report = format_report(inproc, ros, identical, paired, pairs, pairs_identical)
    identical = identical and pairs_identical
    if record_bags:  # a third run, over ROS with a session recorder: one bag per episode
        spec = EvalSpec.load(params, [*overrides, f"evaluator.run_dir={out / 'ros-bags'}"])
        recorded = run_ros(spec, out / "ros-bags-evaluator.log", record_bags=True)
        same = (out / "ros-bags" / "results.jsonl").read_bytes() == (
            out / "ros" / "results.jsonl"
        ).read_bytes()
        lines = recording_report(ros, recorded, out / "ros-bags" / "bags")
        lines.append(f"identical results.jsonl with and without recording: {'yes' if same else 'NO'}")
        report += "\n" + "\n".join(lines)
        identical = identical and same
    return report, identical
