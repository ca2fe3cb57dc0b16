"""Where the ROS path's extra time per step goes: stage sums from both modes, and the breakdown of one bench.

Both evaluation modes sum the wall time of the stages where they differ over the ok episodes and print the sums
as one line at the end of their log (:func:`stage_line`): the in-process evaluator its episode service calls
(``inprocess.*``: starting an episode, building a frame, a move), the ``evaluator`` node its round trips and
what the verifier's Verdicts carry (``evaluator.*``, ``verifier.*``: the verifier's ``ros.*`` stages, timed where
they are paid). ``aiv-eval bench`` reads both lines (:func:`read_stage_seconds`) and prints
:func:`overhead_breakdown`: each stage of the ROS path in milliseconds per step, less the in-process stage that
does the same work (loading an episode, decoding an image, applying a move), and the agent's own stages
(``agent.*``, the same work in both modes) of one run against the other's, so the rows add up to the measured
difference but for what no stage covers (the "not attributed" row: thread hand-overs, the verifier's request
set-up, record writing).

Why log lines rather than a file in the run directory: the run directory is the evaluation's record, the same
in both modes and resumable; these are measurements of one process's run.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

#: The start of the line each mode's log ends with (the rest is a JSON object of stage -> seconds).
STAGE_LINE_PREFIX = "stage seconds: "

#: The counter of steps, carried in the same object (summed like the seconds).
STEPS = "steps"


def stage_line(who: str, seconds: Mapping[str, float]) -> str:
    """The log line of ``who`` ("evaluator", "aiv-eval timing") with its stage sums."""
    return f"{who}: {STAGE_LINE_PREFIX}{json.dumps(dict(sorted(seconds.items())))}"


def read_stage_seconds(log: Path) -> dict[str, float]:
    """The stage sums of the last stage line of ``log``; empty when it has none (an older node, a crash)."""
    found: dict[str, float] = {}
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return found
    for line in text.splitlines():
        _, marker, rest = line.partition(STAGE_LINE_PREFIX)
        if not marker:
            continue
        try:
            values = json.loads(rest)
        except json.JSONDecodeError:
            continue
        if isinstance(values, dict):
            found = {str(key): float(value) for key, value in values.items()}
    return found


@dataclass(frozen=True)
class StageRow:
    """One row of the breakdown: milliseconds per step of the ROS run (what the in-process run spends on the
    same work already taken off) and what it covers."""

    name: str
    ms_per_step: float
    covers: str


def _ms(seconds: float, steps: int) -> float:
    return 1000.0 * seconds / steps if steps else float("nan")


def overhead_breakdown(
    ros: Mapping[str, float], inproc: Mapping[str, float], overhead_ms_per_step: float
) -> list[StageRow]:
    """The ROS path's extra milliseconds per step, stage by stage (see the module docstring); empty when a
    mode's log has no stage line. The last row is what no stage accounts for, so the rows sum to
    ``overhead_ms_per_step`` exactly."""
    ros_steps, inproc_steps = int(ros.get(STEPS, 0)), int(inproc.get(STEPS, 0))
    if not ros_steps or not inproc_steps:
        return []

    def r(*names: str) -> float:
        return _ms(sum(ros.get(name, 0.0) for name in names), ros_steps)

    def i(*names: str) -> float:
        return _ms(sum(inproc.get(name, 0.0) for name in names), inproc_steps)

    result_transport = ros.get("evaluator.verify_result", 0.0) - ros.get("verifier.elapsed", 0.0)
    rows = [
        StageRow(
            "StartEpisode round trip",
            r("evaluator.start_episode") - i("inprocess.start"),
            "service call; the simulator's first frame build and publish (its episode loading, which the "
            "in-process run does too, taken off)",
        ),
        StageRow("VerifyInstance goal -> accepted", r("evaluator.verify_goal"), "action goal round trip"),
        StageRow(
            "VerifyInstance accepted -> result, less the verifier's own time",
            _ms(result_transport, ros_steps),
            "goal dispatch in the verifier, result request and the Verdict's transport",
        ),
        StageRow(
            "verifier gets the frame",
            r("verifier.ros.frame") - i("inprocess.frame"),
            "waiting for the image (build, serialise, transport, deserialise, decode not yet done when asked) "
            "and the agent's view of it (the in-process frame build taken off)",
        ),
        StageRow(
            "MoveToSector server check",
            r("verifier.ros.move_setup"),
            "wait_for_server and the server watch before each move",
        ),
        StageRow("MoveToSector goal -> accepted", r("verifier.ros.move_goal"), "action goal round trip"),
        StageRow(
            "MoveToSector accepted -> result",
            r("verifier.ros.move_result") - i("inprocess.move"),
            "result round trip and the new frame's publish (the in-process move taken off)",
        ),
        StageRow("step report (feedback, step topic)", r("verifier.ros.step_report"), "publishing each step"),
    ]
    agent_ros = [name for name in ros if name.startswith("agent.")]
    agent_inproc = [name for name in inproc if name.startswith("agent.")]
    if agent_ros and agent_inproc:
        rows.append(
            StageRow(
                "the agent's own stages (ROS run - in-process run)",
                r(*agent_ros) - i(*agent_inproc),
                "the same work in both modes (detect, crop, verify, fuse, nbv): what differs is the machine's load "
                "and the process it runs in",
            )
        )
    attributed = sum(row.ms_per_step for row in rows)
    rows.append(
        StageRow(
            "not attributed",
            overhead_ms_per_step - attributed,
            "thread hand-overs, the verifier's request set-up and Verdict, the agent's session start",
        )
    )
    return rows


def frame_detail(ros: Mapping[str, float]) -> list[StageRow]:
    """Per-frame figures the verifier measured where each frame arrived (they overlap the rows above: a frame
    that came before it was asked for cost no wait)."""
    frames = int(ros.get("verifier.frames", 0))
    if not frames:
        return []
    return [
        StageRow(
            "stamp -> message in the verifier",
            _ms(ros.get("verifier.ros.frame_arrival", 0.0), frames),
            "build, serialise, DDS transport, deserialise, executor dispatch",
        ),
        StageRow(
            "decode in the verifier",
            _ms(ros.get("verifier.ros.frame_decode", 0.0), frames),
            "sensor_msgs/Image -> RGB array",
        ),
    ]


def format_breakdown(
    ros: Mapping[str, float], inproc: Mapping[str, float], overhead_ms_per_step: float
) -> list[str]:
    """The breakdown as report lines (a table), or one line saying why there is none."""
    rows = overhead_breakdown(ros, inproc, overhead_ms_per_step)
    if not rows:
        return ["ROS overhead by stage: n/a (a log without its stage line)"]
    lines = [
        "",
        "| ROS overhead by stage (1 pair) | ms per step | share of the overhead | covers |",
        "|---|---|---|---|",
    ]
    for row in rows:
        share = row.ms_per_step / overhead_ms_per_step if overhead_ms_per_step else float("nan")
        lines.append(f"| {row.name} | {row.ms_per_step:+.2f} | {share:.0%} | {row.covers} |")
    lines.append(f"| total (the measured overhead) | {overhead_ms_per_step:+.2f} | 100% | |")
    detail = frame_detail(ros)
    if detail:
        lines += ["", "| per frame, in the verifier | ms per frame | covers |", "|---|---|---|"]
        lines += [f"| {row.name} | {row.ms_per_step:.2f} | {row.covers} |" for row in detail]
    return lines
