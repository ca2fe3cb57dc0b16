"""Every `ros2 ...` command README.md and docs/*.md show, read from the documents themselves and run.

A command is taken from a fenced code block (a line starting with ``ros2 ``, ``\\``-continuations joined) or
from an inline code span that is a whole command (``ros2 VERB list``, or four words or more; no ``...`` or
``<placeholder>``). Each runs the way the documents say to use it:

- ``ros2 launch`` / ``ros2 run`` of nodes, each on its own, in a fresh directory holding what the documents call
  ``my_eval.yaml`` (an evaluation of the micro dataset), ``data/pv_synthetic_default`` (the micro dataset) and the
  repository's ``bags/``: an evaluation (``offline_eval.launch.py``, or ``bag_replay.launch.py`` with
  ``evaluate:=true``) must end by itself with exit code 0 and its metrics; anything else must bring every node it
  starts onto the graph, with none dying, and exit 0 on Ctrl-C;
- the verbs (``node``, ``param``, ``topic``, ``action``, ``interface``, ``run aiv_robot aiv-pregrasp``), in document
  order, against the robot stand-in session the documents start (``robot_verify.launch.py standin:=true``); a
  ``topic echo --once`` is started before the commands that follow it and must print what they cause. A command
  whose comment says it is refused must be refused with the reason; every other one must exit 0 (aiv-pregrasp:
  0, 1 or 3, a decision).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.eval_specs import oracle_veto_spec
from support.ros2_cli import Ros2Process, require_tools, ros2, ros2_until

require_tools("launch_ros", "ros2launch", "ros2param", "ros2action", "ros2topic", "ros2node")

pytestmark = pytest.mark.ros

REPO_ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md"))]
SESSION_VERBS = {"node", "param", "topic", "action", "interface", "service"}
#: Launch files that end by themselves when their evaluation is done (bag_replay only with evaluate:=true).
SELF_ENDING = {"offline_eval.launch.py": (), "bag_replay.launch.py": ("evaluate:=true",)}
#: Arguments that keep such a launch running (offline_eval.launch.py lending pairs to an evaluator elsewhere).
NOT_SELF_ENDING = {"evaluator:=false"}
#: A path the documents use for a model the test builds (tiny, untrained: it proves the command runs, no more).
GROUNDING_DINO_PLACEHOLDER = "model_dir:=/models/grounding-dino-tiny"
STARTED = re.compile(r"\[INFO\] \[([A-Za-z0-9_]+)-\d+\]: process started")


@dataclass(frozen=True)
class DocumentedCommand:
    where: str
    argv: tuple[str, ...]  # without the leading "ros2"
    comment: str

    @property
    def text(self) -> str:
        return "ros2 " + shlex.join(self.argv)

    @property
    def kind(self) -> str:
        verb = self.argv[0]
        if verb == "launch":
            return "oneshot" if "--show-args" in self.argv else "process"
        if verb == "run":
            return "session" if self.argv[2] == "aiv-pregrasp" else "process"
        assert verb in SESSION_VERBS, f"{self.where}: no rule to run `{self.text}` (add one here)"
        return "session"

    @property
    def self_ending(self) -> bool:
        """A launch of an evaluation, which must end by itself with its metrics."""
        return (
            self.argv[0] == "launch"
            and not NOT_SELF_ENDING & set(self.argv)
            and any(
                name in self.argv and all(argument in self.argv for argument in needs)
                for name, needs in SELF_ENDING.items()
            )
        )


def _split(line: str) -> tuple[str, str]:
    """(command, comment) of one shell line; a '#' inside quotes is not a comment."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=False)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    words = list(lexer)
    comment = line.split(" #", 1)[1].strip() if " #" in line else ""
    return shlex.join(words), comment


def documented_commands() -> list[DocumentedCommand]:
    commands: dict[str, DocumentedCommand] = {}
    for document in DOCUMENTS:
        lines = document.read_text(encoding="utf-8").splitlines()
        in_block = False
        pending = ""
        for number, line in enumerate(lines, 1):
            if line.lstrip().startswith("```"):
                in_block = not in_block
                continue
            where = f"{document.relative_to(REPO_ROOT)}:{number}"
            if in_block:
                text = pending + line.strip()
                if text.endswith("\\"):
                    pending = text[:-1] + " "
                    continue
                pending = ""
                if text.startswith("ros2 "):
                    command, comment = _split(text)
                    argv = tuple(shlex.split(command))[1:]
                    commands.setdefault(shlex.join(argv), DocumentedCommand(where, argv, comment))
            else:
                for span in re.findall(r"`(ros2 [^`]+)`", line):
                    argv = tuple(span.split())[1:]
                    whole = len(argv) >= 3 or (len(argv) == 2 and argv[1] == "list")
                    if whole and "..." not in span and "<" not in span:
                        commands.setdefault(shlex.join(argv), DocumentedCommand(where, argv, ""))
    return list(commands.values())


COMMANDS = documented_commands()


def test_the_documents_show_the_commands_a_ros_user_types_first() -> None:
    verbs = {command.argv[:2] for command in COMMANDS}
    for expected in [("launch", "aiv_verifier"), ("run", "aiv_robot"), ("param", "describe"), ("param", "set"),
                     ("action", "send_goal"), ("topic", "echo"), ("node", "list")]:  # fmt: skip
        assert expected in verbs, f"no document shows `ros2 {' '.join(expected)}`"


def _workspace(tmp_path: Path, micro_root: Path) -> Path:
    """A directory holding what the documents' commands name: my_eval.yaml, data/pv_synthetic_default, bags/."""
    cwd = tmp_path / "cwd"
    (cwd / "data").mkdir(parents=True)
    (cwd / "data" / "pv_synthetic_default").symlink_to(micro_root)
    (cwd / "bags").symlink_to(REPO_ROOT / "bags")
    spec = oracle_veto_spec(tmp_path, micro_root, "my_eval", "evaluator.save_crops=false")
    spec.set("evaluator", "run_dir", "runs/my_eval", where="test")
    spec.write(cwd / "my_eval.yaml")
    return cwd


def _node_names(node_list: str) -> set[str]:
    return {name.rsplit("/", 1)[-1] for name in node_list.split()}


@pytest.mark.parametrize(
    "command", [c for c in COMMANDS if c.kind != "session"], ids=lambda c: f"{c.where} {c.text}"[:90]
)
def test_documented_launch_and_run_commands_run(
    command: DocumentedCommand,
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
    micro_root: Path,
    ros2_process,
) -> None:
    cwd = _workspace(tmp_path, micro_root)
    argv = list(command.argv)
    if GROUNDING_DINO_PLACEHOLDER in argv:
        from aiv_models.tiny.grounding_dino_checkpoint import save_grounding_dino_once
        from support.offline_models import shared_model_dir

        model = save_grounding_dino_once(*shared_model_dir(tmp_path_factory, "grounding-dino-tiny"))
        argv[argv.index(GROUNDING_DINO_PLACEHOLDER)] = f"model_dir:={model}"
    if command.kind == "oneshot":
        assert ros2(*command.argv, cwd=cwd).returncode == 0
        return
    process = ros2_process(argv, "documented", cwd=cwd)
    if command.self_ending:
        assert process.wait(timeout_s=240.0) == 0, process.output()
        assert list(cwd.glob("runs/*/metrics.json")), process.output()
        return
    if command.argv[0] == "launch":
        # Every process the launch starts must bring (at least) one node onto the graph.
        process.wait_for_output("process started")
        started = len(STARTED.findall(process.output()))
        ros2_until(["node", "list"], lambda out: len(out.split()) >= started or not process.running,
                   f"the {started} node(s) of `{command.text}`")  # fmt: skip
    else:
        executable = command.argv[2]
        ros2_until(["node", "list"], lambda out: executable in _node_names(out) or not process.running,
                   f"the node of `{command.text}`")  # fmt: skip
    assert process.running and "process has died" not in process.output(), process.output()
    assert process.stop() == 0, process.output()


@pytest.fixture(scope="module")
def standin_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ros2Process]:
    standin = [c for c in COMMANDS if c.argv[:1] == ("launch",) and "standin:=true" in c.argv]
    assert standin, "no document starts the robot stand-in session the verbs are shown against"
    log = tmp_path_factory.mktemp("session") / "standin.log"
    launch = Ros2Process(list(standin[0].argv), log)
    try:
        ros2_until(["node", "info", "/verifier_goals"], lambda out: "/verify_instance:" in out,
                   "the verifier's VerifyInstance server", timeout_s=60.0)  # fmt: skip
        yield launch
    finally:
        assert launch.stop() == 0, launch.output()


def test_documented_verbs_run_against_the_robot_stand_in(
    standin_session: Ros2Process, tmp_path: Path, ros2_process
) -> None:
    echoes: list[tuple[DocumentedCommand, Ros2Process]] = []
    ran = []
    for command in (c for c in COMMANDS if c.kind == "session"):
        if command.argv[:2] == ("topic", "echo"):
            assert "--once" in command.argv, f"{command.where}: an echo the test cannot wait for"
            echo = ros2_process(list(command.argv), "echo")
            # (with the type given, as the documents show it, the echo subscribes without waiting for a publisher)
            topic = "/" + next(word for word in command.argv[2:] if not word.startswith("-")).lstrip("/")
            ros2_until(["topic", "info", topic], lambda out: "Subscription count: 0" not in out,
                       f"the subscription of `{command.text}`")  # fmt: skip
            echoes.append((command, echo))
            continue
        completed = ros2(*command.argv, timeout_s=240.0, check=False)
        output = completed.stdout + completed.stderr
        if "refused" in command.comment:
            assert "Setting parameter failed" in output and "read-only" in output, (
                f"{command.where}\n{output}"
            )
        elif command.argv[:3] == ("run", "aiv_robot", "aiv-pregrasp"):
            assert completed.returncode in (0, 1, 3), f"{command.where}: `{command.text}`\n{output}"
        else:
            assert completed.returncode == 0, f"{command.where}: `{command.text}`\n{output}"
        ran.append(command.text)
    assert ran
    for command, echo in echoes:
        assert echo.wait(timeout_s=60.0) == 0, f"{command.where}: nothing came on `{command.text}`"
        assert "decision:" in echo.output(), echo.output()
