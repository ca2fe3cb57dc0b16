"""``aiv-pregrasp``: ask the verifier whether the object in front of the robot is the one described, before grasping.

    aiv-pregrasp "a blue mug with white flowers"
    aiv-pregrasp "a blue mug with white flowers" "the mug with a daisy print" --budget 6 --timeout 600

Sends one VerifyInstance goal, prints every step as it happens (sector, what the verifier believes now, the
move it asked for and how the move went: a move the robot could not make names why, e.g. "-> unreachable (...
Nav2 aborted the goal: error code 9002 (TF_ERROR))"), then the verdict: YES / NO with its confidence and the
attribute table (the reasons), or why there is no answer, and the verifier's notes.

Exit codes (what a grasp script branches on):

====  ===============================================================================================
0     YES: this is the described object; grasp it
1     NO: it is not
3     UNDECIDED: the evidence could not settle it (evidential fusion); the attributes no view could verify
      are printed ("could not verify: shoulder straps, front pocket"); do not grasp
4     FAILED: no answer (a move or frame failed, the robot faulted, the goal was refused or cancelled);
      the reason is printed
5     no verifier: no VerifyInstance server, or no verdict within ``--timeout``
2     bad command line
====  ===============================================================================================

The same call from Python, in a grasp pipeline's own node (see :func:`verify_before_grasp`)::

    from aiv_robot.pregrasp import verify_before_grasp
    verdict = verify_before_grasp(node, ["a blue mug with white flowers"], timeout_s=600.0)
    if verdict is not None and verdict.decision == verdict.DECISION_YES:
        grasp()
"""

from __future__ import annotations

import argparse
import contextlib
import math
import re
import sys
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TextIO

import rclpy
from aiv_common.action_results import unexplained_verdict_ending
from aiv_common.action_waits import RenewableActionClient, action_server_watch
from aiv_interfaces.action import VerifyInstance
from aiv_interfaces.msg import AttributeState, StepReport, Verdict
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node

EXIT_YES, EXIT_NO, EXIT_USAGE, EXIT_UNDECIDED, EXIT_FAILED, EXIT_NO_VERIFIER = 0, 1, 2, 3, 4, 5
EXIT_CODES = {
    Verdict.DECISION_YES: EXIT_YES,
    Verdict.DECISION_NO: EXIT_NO,
    Verdict.DECISION_UNDECIDED: EXIT_UNDECIDED,
    Verdict.DECISION_FAILED: EXIT_FAILED,
}
DECISION_NAMES = {
    Verdict.DECISION_YES: "YES",
    Verdict.DECISION_NO: "NO",
    Verdict.DECISION_UNDECIDED: "UNDECIDED",
    Verdict.DECISION_FAILED: "FAILED",
}
STATE_NAMES = {
    AttributeState.STATE_MISSING: "not seen",
    AttributeState.STATE_MATCHED: "matches",
    AttributeState.STATE_CONTRADICTED: "contradicts",
}


def verify_before_grasp(
    node: Node,
    descriptions: Sequence[str],
    *,
    action_name: str = "verify_instance",
    timeout_s: float = 600.0,
    server_wait_s: float = 10.0,
    step_budget: int = 0,
    category_hint: str = "",
    request_id: str = "",
    on_step: Callable[[StepReport], None] | None = None,
    client: RenewableActionClient | None = None,
) -> Verdict | None:
    """Send one VerifyInstance goal from ``node`` (spun by someone else) and return its Verdict; None when no
    verifier answered. ``on_step`` sees every step's report as it arrives. ``client`` is a caller's client
    to reuse across calls; without it one is made for this call and released after it."""
    goal = VerifyInstance.Goal(
        request_id=request_id or f"pregrasp-{uuid.uuid4().hex[:8]}",
        descriptions=list(descriptions),
        step_budget=step_budget,
        category_hint=category_hint,
    )
    with _borrowed_or_own(node, action_name, client) as in_use:
        return _send_and_wait(node, in_use, goal, action_name, timeout_s, server_wait_s, on_step)


@contextlib.contextmanager
def _borrowed_or_own(
    node: Node, action_name: str, client: RenewableActionClient | None
) -> Iterator[RenewableActionClient]:
    """The caller's client, or one made for this call and released after it."""
    if client is not None:
        yield client
        return
    own = RenewableActionClient(node, VerifyInstance, action_name)
    try:
        yield own
    finally:
        own.release()


def _send_and_wait(
    node: Node,
    client: RenewableActionClient,
    goal: Any,
    action_name: str,
    timeout_s: float,
    server_wait_s: float,
    on_step: Callable[[StepReport], None] | None,
) -> Verdict | None:
    if not client.wait_for_server(server_wait_s):
        return None
    alive = action_server_watch(node, action_name)
    shown: set[int] = set()
    shown_lock = threading.Lock()

    def show(report: StepReport) -> None:
        with shown_lock:
            if on_step is None or int(report.step) in shown:
                return
            shown.add(int(report.step))
        on_step(report)

    sent = client.send_goal_confirmed(
        goal,
        timeout_s=server_wait_s,
        alive=alive,
        what="the verifier",
        feedback_callback=lambda message: show(message.feedback.step),
    )
    if sent is None or not sent.accepted:
        return None
    response = sent.result(timeout_s, alive, "the verifier")
    if response is None:
        return None
    unbelievable = unexplained_verdict_ending(response)
    if unbelievable is not None:  # e.g. the verifier's execute raised: rclpy's default verdict reads NO
        return Verdict(
            request_id=goal.request_id, decision=Verdict.DECISION_FAILED, failure_reason=unbelievable
        )
    verdict = response.result.verdict
    # Feedback is best effort (it can arrive after the result, when rclpy no longer delivers it): every step
    # is also in the verdict's transcript, so the ones not seen live are shown now, in order.
    for report in sorted(verdict.transcript, key=lambda item: int(item.step)):
        show(report)
    return verdict


def format_step(report: StepReport) -> str:
    """One line per step: where the view was taken, the belief, and the move with its outcome (and, when the
    move was not made, the move server's reason)."""
    belief = DECISION_NAMES.get(report.belief, "?")
    where = f"sector {report.sector}" if report.sector >= 0 else "sector ?"
    if report.action == StepReport.ACTION_DECIDE:
        action = f"decided ({report.stop_reason or 'stop'})"
    else:
        outcome = f" -> {report.move_outcome}" if report.move_outcome else ""
        note = str(getattr(report, "move_note", "") or "")
        outcome += f" ({note})" if note and outcome else ""
        trap = " (object not clearly visible there)" if report.trap_view else ""
        action = f"move {report.move_direction}{outcome}{trap}"
    seen = ", ".join(f"{row.name}={row.last_answer}" for row in report.attributes if row.last_answer)
    return f"step {report.step}: {where}, belief {belief}; {action}" + (f" [{seen}]" if seen else "")


def format_verdict(verdict: Verdict) -> list[str]:
    """The answer and its reasons, one line each; the verifier's notes last ("note: move back-left not made:
    ...": what it noticed without refusing the request, a move the robot could not make among them).

    With the evidential fusion the first line gives the probability that this is the described object (the
    confidence of the reference fusions is a vote count, not a probability), and a line names what no view
    could verify: "could not verify: shoulder straps, front pocket"."""
    name = DECISION_NAMES.get(verdict.decision, str(verdict.decision))
    probability = float(getattr(verdict, "probability", math.nan))
    # An evidential verdict names each attribute's claim kind (the vote fusions leave it empty and the
    # probability NaN; a message built without it reads 0.0, which must not pass for a probability).
    evidential = any(getattr(row, "claim_kind", "") for row in verdict.attributes)
    sureness = (
        f"probability {probability:.2f} that it is the described object"
        if evidential and math.isfinite(probability)
        else f"confidence {verdict.confidence:.2f}"
    )
    lines = [
        f"{name} ({sureness}, {verdict.steps} steps, views from sectors "
        f"{list(verdict.visited_sectors)}, stop: {verdict.stop_reason or '-'})"
    ]
    if verdict.decision == Verdict.DECISION_FAILED:
        lines.append(f"  reason: {verdict.failure_reason or 'none given'}")
    unverified = list(getattr(verdict, "unverified_attributes", ()))
    if unverified:
        phrases = {row.name: row.evidence_phrase for row in verdict.attributes}
        lines.append(
            "  could not verify: " + ", ".join(_claim_words(phrases.get(name, name)) for name in unverified)
        )
    for row in verdict.attributes:
        reason = f" -- {row.last_reason}" if row.last_reason else ""
        opinion = ""
        if getattr(row, "claim_kind", "") and math.isfinite(float(getattr(row, "belief", math.nan))):
            opinion = f", belief {row.belief:.2f} / disbelief {row.disbelief:.2f} / uncertainty {row.uncertainty:.2f}"
        lines.append(
            f"  {row.name} ({row.evidence_phrase!r}): {STATE_NAMES.get(row.state, '?')}, "
            f"votes {row.votes_matched:.1f} yes / {row.votes_contradicted:.1f} no{opinion}{reason}"
        )
    lines += [f"  note: {note}" for note in getattr(verdict, "notes", ())]
    return lines


_COLOUR_LEAD = re.compile(r"^(?:an?\s+|the\s+)?", re.IGNORECASE)


def _claim_words(phrase: str) -> str:
    """What a claim is about, for people: the evidence phrase without its article and colour words ("blue
    shoulder straps" -> "shoulder straps"); the phrase itself when nothing is left."""
    words = _COLOUR_LEAD.sub("", phrase.strip()).split()
    kept = [word for word in words if word.lower() not in _COLOUR_WORDS]
    return " ".join(kept) or phrase


#: Colour words a person's description leads a part with; dropped when naming what could not be verified.
_COLOUR_WORDS = frozenset(
    [
        "red",
        "orange",
        "yellow",
        "green",
        "blue",
        "purple",
        "pink",
        "brown",
        "black",
        "white",
        "grey",
        "gray",
        "silver",
        "gold",
        "beige",
        "navy",
        "teal",
        "turquoise",
        "maroon",
        "cream",
        "tan",
        "olive",
        "light",
        "dark",
        "bright",
        "pale",
    ]
)


def main(argv: list[str] | None = None, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    parser = argparse.ArgumentParser(prog="aiv-pregrasp", description=__doc__.split("\n\n")[0])
    parser.add_argument("descriptions", nargs="+", help="description(s) of the object to grasp")
    parser.add_argument("--action", default="verify_instance", help="VerifyInstance action name")
    parser.add_argument("--budget", type=int, default=0, help="step budget (0: the verifier's default)")
    parser.add_argument("--category", default="", help="category hint (one of the benchmark's classes)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for the verdict")
    parser.add_argument("--server-wait", type=float, default=10.0, help="seconds to wait for the verifier")
    parser.add_argument("--request-id", default="", help="id echoed in feedback and verdict")
    try:
        args, ros_args = parser.parse_known_args(argv)
    except SystemExit as exit_:
        return EXIT_USAGE if exit_.code else 0
    if args.budget < 0 or args.timeout <= 0 or args.server_wait <= 0:
        print("aiv-pregrasp: --budget must be >= 0 and the timeouts > 0", file=sys.stderr)
        return EXIT_USAGE
    try:
        rclpy.init(args=[sys.argv[0], *ros_args])
    except RuntimeError as error:
        print(f"aiv-pregrasp: bad ROS arguments: {error}", file=sys.stderr)
        return EXIT_USAGE
    node = Node("aiv_pregrasp")
    client = RenewableActionClient(node, VerifyInstance, args.action)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    spinner = threading.Thread(target=_spin, args=(executor,), daemon=True)
    spinner.start()
    try:
        print(f"verifying: {' | '.join(args.descriptions)}", file=out, flush=True)
        verdict = verify_before_grasp(
            node,
            args.descriptions,
            action_name=args.action,
            timeout_s=args.timeout,
            server_wait_s=args.server_wait,
            step_budget=args.budget,
            category_hint=args.category,
            request_id=args.request_id,
            on_step=lambda report: print(format_step(report), file=out, flush=True),
            client=client,
        )
        if verdict is None:
            print(
                f"aiv-pregrasp: no verdict: no VerifyInstance server on {args.action!r} within "
                f"{args.server_wait:g} s, or no answer within {args.timeout:g} s",
                file=sys.stderr,
            )
            return EXIT_NO_VERIFIER
        for line in format_verdict(verdict):
            print(line, file=out, flush=True)
        return EXIT_CODES.get(verdict.decision, EXIT_FAILED)
    except (KeyboardInterrupt, ExternalShutdownException):
        return EXIT_FAILED
    finally:
        executor.shutdown(timeout_sec=2.0)
        spinner.join(timeout=5.0)
        client.release()
        node.destroy_node()
        rclpy.try_shutdown()


def _spin(executor: SingleThreadedExecutor) -> None:
    with contextlib.suppress(ExternalShutdownException):
        executor.spin()


if __name__ == "__main__":
    sys.exit(main())
