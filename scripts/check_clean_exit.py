#!/usr/bin/env python3
"""Stop every launch file with Ctrl-C many times over and say how each run ended.

    python scripts/check_clean_exit.py                        # every scenario, 20 runs each
    python scripts/check_clean_exit.py --runs 5 --busy-loops 2 offline_sim robot_verify_mid

Each run starts ``ros2 launch aiv_verifier <file>`` in a session of its own, waits until every node has said
it is up (and, for the ``*_mid`` scenarios, until a request is under way: the stand-in's base is driving for
``robot_verify``, the evaluator has recorded an episode and runs the next for ``offline_eval``), then sends
SIGINT to the whole process group, as a terminal's Ctrl-C does. Standard input is not a terminal, so
``ros2 launch`` also forwards a SIGINT of its own to every node: each node gets two, as under CI or a
service manager. A run is *clean* when the launch ended by itself, every node it started "finished cleanly"
(exit code 0), nothing "has died" and nothing was escalated to SIGTERM or SIGKILL. The table gives, per
scenario, the runs, the clean ones, those that also ended within the scenario's limit (2 s idle, 5 s
mid-request) and the longest time from the SIGINT to the end of the launch. ``--busy-loops 2`` runs two
``yes > /dev/null`` beside it, as the issue's check does. ``--background-job`` starts each launch with SIGINT
ignored, as ``ros2 launch ... &`` in a script does; a run also needs launch's own "user interrupted with
ctrl-c" to count as clean (without it launch ran no shutdown: the nodes ended on their own SIGINT). The logs of
every run stay in ``--log-dir``.

Needs the ROS 2 tools (``ros2 launch``: apt ROS, or ``make ros2-tools``) and the sourced workspace
(``source .env.sh``). The dataset is the synthetic ``micro`` preset, generated once into the log directory
unless ``--dataset-root`` names one. ``detector.launch.py`` is left out: it needs a Grounding DINO checkpoint.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

REPO = Path(__file__).resolve().parents[1]
TOUR_BAG = REPO / "bags" / "tour_micro_mug"
#: Seconds a launch may take to bring its nodes up (two busy loops on two cores make it slow).
READY_TIMEOUT_S = 240.0
#: Seconds after the SIGINT before the run is given up and the group killed (launch escalates at 5 and 10 s).
END_TIMEOUT_S = 30.0
IDLE_LIMIT_S = 2.0
MID_REQUEST_LIMIT_S = 5.0
DOMAIN_LOCK_DIR = Path(tempfile.gettempdir()) / "aiv-ros-domain-locks"  # shared with tests/support
#: Ignore SIGINT, then become the command (the ignore survives exec), as a shell starts a background job.
EXEC_WITH_SIGINT_IGNORED = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); "
    "os.execvp(sys.argv[1], sys.argv[1:])"
)

#: A description of the stand-in's object (a backpack) that its first view cannot settle.
STANDIN_QUERY = "an orange backpack with blue shoulder straps and a green front pocket"
#: A VerifyInstance request as a client sends it (``aiv-pregrasp`` takes no fusion or view strategy).
REQUEST_SCRIPT = """
import sys, threading
import rclpy
from aiv_common.action_waits import send_goal_confirmed
from aiv_interfaces.action import VerifyInstance
from rclpy.action import ActionClient
from rclpy.executors import SingleThreadedExecutor

rclpy.init()
node = rclpy.create_node("clean_exit_request")
client = ActionClient(node, VerifyInstance, "verify_instance")
executor = SingleThreadedExecutor()
executor.add_node(node)
threading.Thread(target=executor.spin, daemon=True).start()
client.wait_for_server(timeout_sec=120.0)
goal = VerifyInstance.Goal(request_id="clean-exit", descriptions=[sys.argv[1]], step_budget=6,
                           fusion="attr_majority", nbv_strategy="farthest")
sent = send_goal_confirmed(client, goal, timeout_s=60.0)
print("accepted" if sent is not None and sent.accepted else "not accepted", flush=True)
"""
VERIFIER_UP = r"\[verifier\]: verifier (ready|active)"
OFFLINE_SIM_UP = r"\[offline_sim\]: serving "
ADAPTER_UP = r"\[robot_adapter\]: robot adapter ready"
STANDIN_UP = r"\[robot_sim\]: standing in "
EVALUATOR_UP = r"\[evaluator\]: evaluating "

FINISHED = re.compile(r"\[INFO\] \[(?P<process>[\w.-]+)\]: process has finished cleanly")
DIED = re.compile(
    r"\[ERROR\] \[(?P<process>[\w.-]+)\]: process has died \[pid \d+, exit code (?P<code>-?\d+)"
)
STARTED = re.compile(r"\[INFO\] \[(?P<process>[\w.-]+)\]: process started with pid")
ESCALATED = re.compile(r"sending signal 'SIG(TERM|KILL)'")


@dataclass
class Context:
    """What the scenarios need: the dataset, a directory for this run's files, the ROS environment."""

    dataset_root: Path
    run_dir: Path
    env: dict[str, str]
    background_job: bool = (
        False  # start the launch with SIGINT ignored, as `ros2 launch ... &` in a script does
    )


@dataclass(frozen=True)
class Scenario:
    """One way to start and stop a launch file."""

    name: str
    launch_file: str
    arguments: Callable[[Context], list[str]]
    ready: tuple[str, ...]  # output patterns that say every node is up
    limit_s: float
    mid_request: Callable[[Context, Run], None] | None = None  # returns once a request is under way
    after_stop: str = ""  # output pattern expected after the SIGINT (counted apart: the base told to stop)
    involves_verifier: bool = False


@dataclass
class Run:
    """One launch, its output lines as they came (seconds since start, text) and how it ended."""

    process: subprocess.Popen[bytes]
    log: IO[str]
    lines: list[tuple[float, str]] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)
    helpers: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def read(self) -> None:
        assert self.process.stdout is not None
        for raw in self.process.stdout:
            text = raw.decode("utf-8", errors="replace").rstrip("\n")
            self.lines.append((time.monotonic() - self.started, text))
            self.log.write(text + "\n")

    def text(self) -> str:
        return "\n".join(line for _, line in list(self.lines))

    def wait_for(self, patterns: tuple[str, ...], timeout_s: float, what: str) -> None:
        deadline = time.monotonic() + timeout_s
        pending = [re.compile(pattern) for pattern in patterns]
        while pending:
            text = self.text()
            pending = [pattern for pattern in pending if not pattern.search(text)]
            if not pending:
                return
            if self.process.poll() is not None:
                raise RunProblem(f"the launch ended (code {self.process.returncode}) before {what}")
            if DIED.search(text):
                raise RunProblem(f"a node died before {what}")
            if time.monotonic() > deadline:
                missing = ", ".join(pattern.pattern for pattern in pending)
                raise RunProblem(f"no {missing} within {timeout_s:.0f} s ({what})")
            time.sleep(0.05)


class RunProblem(RuntimeError):
    """A run that could not be brought to the point where it is stopped."""


@dataclass
class Outcome:
    clean: bool
    end_s: float | None
    notes: list[str]
    after_stop_seen: bool = False


# -- scenarios ---------------------------------------------------------------------------------------------


def _verification_mid_request(context: Context, run: Run) -> None:
    """Ask the stand-in setup for a verdict and return once the base is driving (a move under way).

    The request is the one ``tests/ros/test_cancel_mid_move.py`` sends: the reference's vote fusion with
    angular-FPS views drives to another sector; the robot defaults (evidential fusion) may rightly settle
    the stand-in's object from where it stands, and then nothing would be under way to stop.
    """
    log = open(context.run_dir / "request.log", "wb")  # noqa: SIM115 - closed with the process
    run.helpers.append(
        subprocess.Popen(
            [sys.executable, "-c", REQUEST_SCRIPT, STANDIN_QUERY],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=context.env,
            start_new_session=True,  # not in the launch's group: the Ctrl-C is the launch's alone
        )
    )
    run.wait_for((r"\[robot_sim\]: goal status: accepted",), 180.0, "the base started driving")


def _evaluator_mid_request(context: Context, run: Run) -> None:
    """Return once the evaluator has recorded one episode (it then runs the next)."""
    results = context.run_dir / "eval" / "results.jsonl"
    deadline = time.monotonic() + 120.0
    while not (results.exists() and results.read_text().count("\n") >= 1):
        if run.process.poll() is not None or time.monotonic() > deadline:
            raise RunProblem("the evaluator recorded no episode")
        time.sleep(0.05)


def _offline_eval_params(context: Context) -> list[str]:
    params = context.run_dir / "offline_eval.yaml"
    params.write_text(
        "/**/offline_sim:\n  ros__parameters:\n"
        f"    dataset_root: {context.dataset_root}\n    index_file: val/pv_index_all.jsonl\n"
        "    privileged_output: true\n"
        "/**/verifier:\n  ros__parameters:\n    verifier.backend: classical\n    agent.bbox_mode: gt\n"
        "/**/evaluator:\n  ros__parameters:\n"
        f"    run_dir: {context.run_dir / 'eval'}\n    save_crops: false\n"
    )
    return [f"params_file:={params}"]


SCENARIOS = (
    Scenario(
        "offline_sim",
        "offline_sim.launch.py",
        lambda c: [f"dataset_root:={c.dataset_root}"],
        (OFFLINE_SIM_UP,),
        IDLE_LIMIT_S,
    ),
    Scenario(
        "robot_verify_idle",
        "robot_verify.launch.py",
        lambda c: ["standin:=true"],
        (ADAPTER_UP, STANDIN_UP, VERIFIER_UP),
        IDLE_LIMIT_S,
        involves_verifier=True,
    ),
    Scenario(
        "robot_verify_mid",
        "robot_verify.launch.py",
        lambda c: ["standin:=true"],
        (ADAPTER_UP, STANDIN_UP, VERIFIER_UP),
        MID_REQUEST_LIMIT_S,
        mid_request=_verification_mid_request,
        after_stop=r"\[robot_sim\]: goal status: cancelled",
        involves_verifier=True,
    ),
    Scenario(
        "offline_eval_mid",
        "offline_eval.launch.py",
        _offline_eval_params,
        (EVALUATOR_UP,),
        MID_REQUEST_LIMIT_S,
        mid_request=_evaluator_mid_request,
        involves_verifier=True,
    ),
    Scenario(
        "bag_replay",
        "bag_replay.launch.py",
        lambda c: [f"tour_bags:={TOUR_BAG}"],
        (OFFLINE_SIM_UP, VERIFIER_UP),
        IDLE_LIMIT_S,
        involves_verifier=True,
    ),
    Scenario(
        "verifier",
        "verifier.launch.py",
        lambda c: [],
        (VERIFIER_UP,),
        IDLE_LIMIT_S,
        involves_verifier=True,
    ),
)


# -- one run -----------------------------------------------------------------------------------------------


def run_once(scenario: Scenario, context: Context) -> Outcome:
    context.run_dir.mkdir(parents=True, exist_ok=True)
    log = open(context.run_dir / "launch.log", "w", encoding="utf-8")  # noqa: SIM115 - closed below
    argv = ["ros2", "launch", "aiv_verifier", scenario.launch_file, *scenario.arguments(context)]
    log.write(
        f"$ {' '.join(argv)}{'  (SIGINT ignored, as a background job)' if context.background_job else ''}\n"
    )
    if context.background_job:
        argv = [sys.executable, "-c", EXEC_WITH_SIGINT_IGNORED, *argv]
    process = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=context.env,
        cwd=context.run_dir,
        start_new_session=True,
    )
    run = Run(process, log)
    reader = threading.Thread(target=run.read, daemon=True)
    reader.start()
    sent: float | None = None
    try:
        run.wait_for(scenario.ready, READY_TIMEOUT_S, "every node was up")
        if scenario.mid_request is not None:
            scenario.mid_request(context, run)
        sent = time.monotonic()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGINT)
        try:
            process.wait(timeout=END_TIMEOUT_S)
            ended: float | None = time.monotonic()
        except subprocess.TimeoutExpired:
            ended = None
        outcome = judge(run, sent, ended)
        after = [text for at, text in list(run.lines) if at >= sent - run.started]
        outcome.after_stop_seen = bool(scenario.after_stop) and bool(
            re.search(scenario.after_stop, "\n".join(after))
        )
        return outcome
    except RunProblem as problem:
        return Outcome(False, None, [f"not stopped: {problem}"])
    finally:
        for helper in [process, *run.helpers]:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(helper.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                helper.wait(timeout=10)
        reader.join(timeout=5)
        log.close()


def judge(run: Run, sent: float, ended: float | None) -> Outcome:
    text = run.text()
    notes: list[str] = []
    if ended is None:
        notes.append(f"still running {END_TIMEOUT_S:.0f} s after the SIGINT")
    started = {match["process"] for match in STARTED.finditer(text)}
    finished = {match["process"] for match in FINISHED.finditer(text)}
    for match in DIED.finditer(text):
        notes.append(f"{_node(match['process'])} exit {match['code']}")
    for match in ESCALATED.finditer(text):
        notes.append(f"escalated to SIG{match[1]}")
    missing = sorted(started - finished - {match["process"] for match in DIED.finditer(text)})
    notes += [f"{_node(name)} never ended" for name in missing]
    if (
        "user interrupted with ctrl-c" not in text
    ):  # the nodes ended on their own SIGINT; launch ran no shutdown
        notes.append("launch did not hear the Ctrl-C")
    end_s = None if ended is None else ended - sent
    return Outcome(not notes, end_s, notes)


def _node(process: str) -> str:
    """``verifier`` for the launch's ``verifier-1``."""
    return re.sub(r"-\d+$", "", process)


# -- set-up ------------------------------------------------------------------------------------------------


def claim_domain_id() -> tuple[int, IO[str]]:
    """A DDS domain id nobody else on this machine uses (the tests' lock files), held while we run."""
    DOMAIN_LOCK_DIR.mkdir(parents=True, exist_ok=True)
    for domain_id in range(101, 0, -1):
        handle = open(DOMAIN_LOCK_DIR / f"domain-{domain_id}.lock", "w")  # noqa: SIM115 - held until exit
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            continue
        return domain_id, handle
    raise SystemExit("check_clean_exit: every ROS domain id 1..101 is in use")


def make_dataset(parent: Path) -> Path:
    from aiv_synth.pipeline import generate_atomic
    from aiv_synth.presets import get_preset

    report = generate_atomic(get_preset("micro"), parent / "pv_micro", seed=42, workers=1, log=lambda _: None)
    return Path(report.root)


def start_busy_loops(count: int) -> list[subprocess.Popen[bytes]]:
    """``yes > /dev/null`` ``count`` times: the load the issue's check runs beside the nodes."""
    return [subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) for _ in range(count)]


def main(argv: list[str] | None = None) -> int:
    names = [scenario.name for scenario in SCENARIOS]
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "scenarios", nargs="*", metavar="SCENARIO", help=f"any of {', '.join(names)} (default: all)"
    )
    parser.add_argument("--runs", type=int, default=20, help="runs per scenario (default 20)")
    parser.add_argument(
        "--busy-loops", type=int, default=0, help="busy loops started beside the nodes (issue: 2)"
    )
    parser.add_argument(
        "--dataset-root", type=Path, help="PInVerify dataset (default: micro, generated once)"
    )
    parser.add_argument(
        "--log-dir", type=Path, help="where every run's output stays (default: a new temp dir)"
    )
    parser.add_argument(
        "--background-job",
        action="store_true",
        help="start each launch with SIGINT ignored, as a script's `ros2 launch ... &` does",
    )
    args = parser.parse_args(argv)
    unknown = [name for name in args.scenarios if name not in names]
    if unknown or args.runs < 1 or args.busy_loops < 0:
        parser.error(f"unknown scenario {unknown[0]!r}" if unknown else "--runs >= 1 and --busy-loops >= 0")
    # Children must take SIGINT as a terminal's Ctrl-C reaches them: a script started in the background
    # (nohup, `&` in a script) has it ignored, and an ignored SIGINT is inherited through exec
    # (--background-job asks for exactly that, on purpose).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(
        signal.SIGTERM, lambda _signum, _frame: sys.exit(1)
    )  # the busy loops are stopped on the way
    if shutil.which("ros2") is None:
        print("check_clean_exit: the `ros2` command is missing: run `make ros2-tools` or source an apt ROS 2")
        return 2
    chosen = [scenario for scenario in SCENARIOS if not args.scenarios or scenario.name in args.scenarios]
    log_dir = (args.log_dir or Path(tempfile.mkdtemp(prefix="aiv-clean-exit-"))).resolve()
    log_dir.mkdir(parents=True, exist_ok=True)
    domain_id, _lock = claim_domain_id()
    env = {
        **os.environ,
        "ROS_DOMAIN_ID": str(domain_id),
        "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST",
        "ROS_LOG_DIR": str(log_dir / "ros-log"),
        "PYTHONUNBUFFERED": "1",
    }
    dataset_root = args.dataset_root.resolve() if args.dataset_root else make_dataset(log_dir)
    busy = start_busy_loops(args.busy_loops)
    started_as = "; launches started with SIGINT ignored" if args.background_job else ""
    print(
        f"logs: {log_dir}; ROS_DOMAIN_ID={domain_id}; {args.busy_loops} busy loop(s){started_as}", flush=True
    )
    rows = []
    try:
        for scenario in chosen:
            outcomes = []
            for number in range(1, args.runs + 1):
                context = Context(
                    dataset_root, log_dir / scenario.name / f"run{number:02d}", env, args.background_job
                )
                outcome = run_once(scenario, context)
                outcomes.append(outcome)
                shown = "clean" if outcome.clean else "; ".join(outcome.notes)
                took = "-" if outcome.end_s is None else f"{outcome.end_s:.2f} s"
                print(f"{scenario.name} run {number}: {shown} ({took})", flush=True)
            rows.append((scenario, outcomes))
    finally:
        for loop in busy:
            loop.kill()
            loop.wait()
    print()
    print(f"{'scenario':<20} {'runs':>4} {'clean':>5} {'in limit':>8} {'max end s':>9}  problems")
    for scenario, outcomes in rows:
        clean = sum(outcome.clean for outcome in outcomes)
        within = sum(
            outcome.clean and outcome.end_s is not None and outcome.end_s <= scenario.limit_s
            for outcome in outcomes
        )
        times = [outcome.end_s for outcome in outcomes if outcome.end_s is not None]
        longest = f"{max(times):.2f}" if times else "-"
        problems = Counter(note for outcome in outcomes for note in outcome.notes)
        listed = ", ".join(f"{note} x{count}" for note, count in problems.most_common())
        if scenario.after_stop:
            seen = sum(outcome.after_stop_seen for outcome in outcomes)
            listed = f"base stopped before the stand-in ended: {seen}/{len(outcomes)}" + (
                f"; {listed}" if listed else ""
            )
        print(
            f"{scenario.name:<20} {len(outcomes):>4} {clean:>5} {within:>5}/{scenario.limit_s:<2.0f}s {longest:>9}  "
            f"{listed}"
        )
    all_clean = all(outcome.clean for _, outcomes in rows for outcome in outcomes)
    return 0 if all_clean else 1


if __name__ == "__main__":
    sys.exit(main())
