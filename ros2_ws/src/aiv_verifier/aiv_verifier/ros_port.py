"""The episode port over ROS: frames from the camera topics, moves through a MoveToSector server.

Built per VerifyInstance request by the verifier node from its long-lived pieces (the :class:`FrameCache` its
topic callbacks fill, its MoveToSector client) and the request's goal handle, and handed to the one episode
loop (:func:`aiv_verifier.agent.episode_loop.run_episode`). Everything ROS-specific about an episode lives here: which
frame belongs to a move (the stamp its result names), how the ground-truth channel becomes the agent's
privileged inputs, bounded waits on a move server that may have died, and per-step feedback on the goal.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiv_common.action_results import move_refused, unexplained_ending
from aiv_common.action_waits import (
    GoalCancelled,
    RenewableActionClient,
    ServerLostError,
    action_server_watch,
)
from aiv_common.move_outcomes import outcome_from_code
from aiv_common.stamps import nanoseconds_to_stamp, stamp_to_nanoseconds
from aiv_interfaces.action import MoveToSector, VerifyInstance
from aiv_interfaces.msg import StepReport
from aiv_models.timing import StageClock
from rclpy.node import Node

from .agent.port import FrameRequest, FrameUnavailable, FrameUnusable, MoveCancelled, MoveFailed, MoveReport
from .agent.steps import AgentStep, ViewFrame
from .agent.trace import TraceEntry
from .camera_model import LatestCamera
from .frame_cache import NANOS_PER_SECOND, FrameCache, FrameEntry, FrameTimeout
from .ros_messages import (
    geometry_from_ground_truth,
    gt_box_from_ground_truth,
    privileged_from_ground_truth,
    step_report,
)


def view_frame(
    entry: FrameEntry, request: FrameRequest, focal_px: float | None = None, levels: tuple[int, ...] = ()
) -> ViewFrame:
    """The agent's input from a cached frame. With the ground-truth channel the sector, image key and the
    privileged fields come from it; without, the loop's bookkeeping supplies the sector and the stamp is the
    image key (a repeated view after a refused move keeps its stamp, so it is recognised as a duplicate).
    Ground truth from a live source (``sector`` -1: a robot stand-in rendering any pose) supplies the privileged
    fields only (with the visible attributes it measured on the render, so the oracle needs no capture look-up);
    sector and image key then come as without it. ``focal_px`` is the camera's focal length for this image
    (from its CameraInfo), None when unknown.

    Height levels: the view's level is the ground truth's (a live source's and a frame without ground truth:
    the level the last move result named, ``request.level``); the episode's levels are those of the ground
    truth's capture layout, else ``levels`` (the node's ``height_levels`` parameter), else the eye level alone.

    Raises :class:`FrameUnusable` for a frame whose image could not be decoded.
    """
    image = entry.image
    if image is None:
        raise FrameUnusable(entry.image_error)
    ground_truth = entry.ground_truth
    if ground_truth is None:
        return ViewFrame(
            image=image,
            step_count=request.step_count,
            current_sector=request.sector,
            navigation_failed=request.navigation_failed,
            image_key=entry.stamp_ns,
            detections=tuple(entry.detections or ()),
            focal_px=focal_px,
            current_level=request.level,
            levels=levels or (0,),
        )
    # A live source (the robot stand-in) knows no virtual sectors (sector -1): the loop's bookkeeping names
    # the sector, and each frame is its own view, keyed by its stamp like a frame without ground truth.
    live = int(ground_truth.sector) < 0
    layout_levels = tuple(sorted({int(item.level) for item in ground_truth.layout}))
    return ViewFrame(
        image=image,
        step_count=request.step_count,
        current_sector=request.sector if live else int(ground_truth.sector),
        navigation_failed=request.navigation_failed,
        image_key=entry.stamp_ns if live else ground_truth.capture_tag,
        capture_tag=ground_truth.capture_tag,
        gt_box=gt_box_from_ground_truth(ground_truth),
        detections=tuple(entry.detections or ()),
        target_visible=bool(ground_truth.mask_meets_threshold),
        privileged=privileged_from_ground_truth(ground_truth),
        geometry=geometry_from_ground_truth(ground_truth),
        focal_px=focal_px,
        current_level=request.level if live else int(ground_truth.level),
        levels=layout_levels or levels or (0,),
    )


@dataclass(frozen=True)
class FrameSource:
    """Frames the node's topic callbacks collect, and what a frame must carry before the agent may see it."""

    cache: FrameCache
    timeout_s: float
    need_ground_truth: bool = False
    need_detections: bool = False
    detections_timeout_s: float | None = None
    """When set, detections get a wait of their own after the image: a model detector takes seconds per
    frame on a CPU, far longer than a camera frame takes to arrive (see ``FrameCache.wait_detections``)."""
    detections_query: str | None = None
    """When set, only detections computed for this text query (or by a detector that does not say which) are
    accepted: the query this request asked the detector for (a wait of their own, as above)."""
    window_s: float = 0.0
    """A named frame that never arrives may be replaced by the first one up to this much later (a lossy
    camera link; see ``FrameCache``); 0 = that exact frame only."""
    camera: LatestCamera | None = None
    """The camera's newest calibration (CameraInfo), when the node listens for one."""
    levels: tuple[int, ...] = ()
    """Height levels the move server offers when the ground truth does not say (``height_levels``)."""

    def focal_for(self, entry: FrameEntry) -> float | None:
        """The focal length in pixels of the entry's image, None without a calibration that fits it."""
        if self.camera is None or entry.image is None:
            return None
        height, width = entry.image.shape[:2]
        return self.camera.focal_for(int(width), int(height))

    def wait(self, stamp_ns: int | None) -> FrameEntry:
        """The complete entry for ``stamp_ns`` (None: the newest); :class:`FrameUnavailable` if none comes."""
        separate = self.need_detections and (
            self.detections_timeout_s is not None or self.detections_query is not None
        )
        try:
            entry = self.cache.wait(
                stamp_ns,
                self.timeout_s,
                need_ground_truth=self.need_ground_truth,
                need_detections=self.need_detections and not separate,
                window_ns=round(self.window_s * NANOS_PER_SECOND),
            )
            if separate and not entry.image_error:
                entry = self.cache.wait_detections(
                    entry.stamp_ns,
                    self.timeout_s if self.detections_timeout_s is None else self.detections_timeout_s,
                    need_ground_truth=self.need_ground_truth,
                    query=self.detections_query,
                )
        except FrameTimeout as error:
            raise FrameUnavailable(str(error)) from error
        return entry


@dataclass(frozen=True)
class MoveChannel:
    """A MoveToSector client with bounded waits. ``node`` is the client's node: it watches the server's
    presence in the graph, so a server that crashes mid-move fails the request at once, not at the timeout.
    ``client`` is renewed when a move's goal goes unanswered (see ``action_waits``)."""

    node: Node
    client: RenewableActionClient
    action_name: str
    server_wait_s: float
    timeout_s: float

    def request(
        self,
        direction: str,
        cancel_when: Callable[[], bool] = lambda: False,
        clock: StageClock | None = None,
    ) -> Any:
        """The MoveToSector result of one move; raises :class:`MoveFailed` saying why there is none.

        While the move is under way ``cancel_when`` is checked every ``CANCEL_CHECK_S``: once true, the move goal
        is cancelled (the robot adapter then stops the base) and :class:`MoveCancelled` is raised at once.
        ``clock``, when given, gets the move's round trips: ``ros.move_setup`` (the server check before the
        goal), ``ros.move_goal`` (goal sent -> accepted) and ``ros.move_result`` (accepted -> result).
        """
        clock = StageClock() if clock is None else clock
        started = time.perf_counter()
        if not self.client.wait_for_server(self.server_wait_s):
            raise MoveFailed(f"no MoveToSector server within {self.server_wait_s:.1f} s")
        server_alive = action_server_watch(self.node, self.action_name)
        clock.add("ros.move_setup", started)
        try:
            started = time.perf_counter()
            sent = self.client.send_goal_confirmed(
                MoveToSector.Goal(direction=direction),
                timeout_s=self.timeout_s,
                alive=server_alive,
                what="the move server",
            )
            clock.add("ros.move_goal", started)
            if sent is None:
                raise MoveFailed(f"the move goal was not acknowledged within {self.timeout_s:.1f} s")
            if not sent.accepted:
                raise MoveFailed("the move goal was rejected by the server")
            if cancel_when():
                sent.cancel()
                raise MoveCancelled("the move was cancelled as soon as the server accepted it")
            started = time.perf_counter()
            response = sent.result(self.timeout_s, server_alive, "the move server", cancel_when=cancel_when)
            clock.add("ros.move_result", started)
            if response is None:
                raise MoveFailed(f"no move result within {self.timeout_s:.1f} s")
            trusted_result(response)
        except GoalCancelled as error:
            raise MoveCancelled(f"the move under way was cancelled: {error}") from error
        except ServerLostError as error:
            raise MoveFailed(str(error)) from error
        return response.result


def trusted_result(response: Any) -> None:
    """Raise :class:`MoveFailed` unless a move's result can be believed.

    It can from a goal that succeeded, or from one that did not and says so itself (``OUTCOME_REJECTED`` with
    the server's message, which the episode records); a reported move must also name the frame that shows the
    new view. Believing anything else would judge the old view as if the camera had moved."""
    result = response.result
    ending = unexplained_ending(response, move_refused)
    if ending is not None:
        said = f": {result.message}" if result.message else " without saying why"
        raise MoveFailed(f"the move {ending}{said}")
    if result.outcome == MoveToSector.Result.OUTCOME_MOVED and not stamp_to_nanoseconds(result.frame_stamp):
        raise MoveFailed(
            f"the move server reported a move to sector {int(result.sector)} without the stamp of a frame "
            "showing it (MoveToSector.Result.frame_stamp)"
        )


class RosEpisodePort:
    """One VerifyInstance request's port. ``report_step`` is the loop's step hook: it publishes the step as
    goal feedback, on the step topic through ``publish_step`` (what a session recorder needs: action feedback
    is not a topic) and, through ``publish_debug``, as a debug image, and keeps it for the Verdict's
    transcript in ``reports``. ``clock`` holds what the ROS path costs per step (``ros.*`` stages: waiting for
    a frame and making the agent's view of it, its decoding and arrival, the move round trips, publishing the
    step), which the node adds to the Verdict's timings so that ``aiv-eval bench`` can say where the ROS
    path's extra time goes."""

    def __init__(
        self,
        frames: FrameSource,
        moves: MoveChannel,
        goal_handle: Any,
        publish_debug: Callable[[ViewFrame, AgentStep], None] | None = None,
        publish_step: Callable[[StepReport], None] | None = None,
        stopping: Callable[[], bool] = lambda: False,
    ) -> None:
        self.frames = frames
        self.stopping = stopping
        self.moves = moves
        self.goal_handle = goal_handle
        self.publish_debug = publish_debug
        self.publish_step = publish_step
        self.reports: list[StepReport] = []
        self.clock = StageClock()
        self._image_stamp: Any = None  # header stamp of the frame the agent saw last

    def frame(self, request: FrameRequest) -> ViewFrame:
        started = time.perf_counter()
        entry = self.frames.wait(request.stamp)
        frame = view_frame(entry, request, self.frames.focal_for(entry), self.frames.levels)
        self._image_stamp = nanoseconds_to_stamp(entry.stamp_ns)
        self.clock.add("ros.frame", started)
        # Measured where the message arrived (the node's topic thread), kept with the frame.
        for stage, seconds in (("ros.frame_decode", entry.decode_s), ("ros.frame_arrival", entry.arrival_s)):
            self.clock.seconds[stage] = self.clock.seconds.get(stage, 0.0) + seconds
            self.clock.calls[stage] = self.clock.calls.get(stage, 0) + 1
        return frame

    def move(self, direction: str) -> MoveReport:
        result = self.moves.request(direction, cancel_when=self.cancelled, clock=self.clock)
        return MoveReport(
            outcome=outcome_from_code(result.outcome),
            trap_view=bool(result.trap_view),
            sector=int(result.sector) if result.sector >= 0 else None,
            frame_stamp=stamp_to_nanoseconds(result.frame_stamp) or None,
            message=result.message,
            level=int(result.level),
            warning=result.visibility_warning,
        )

    def cancelled(self) -> bool:
        """The caller cancelled the goal, or the verifier is shutting down (``stopping``)."""
        return bool(self.goal_handle.is_cancel_requested) or self.stopping()

    def report_step(self, frame: ViewFrame, entry: TraceEntry[AgentStep]) -> None:
        started = time.perf_counter()
        self._report_step(frame, entry)
        self.clock.add("ros.step_report", started)

    def _report_step(self, frame: ViewFrame, entry: TraceEntry[AgentStep]) -> None:
        if self.publish_debug is not None:
            self.publish_debug(frame, entry.step)
        report = step_report(
            entry.step, self._image_stamp, entry.move_result, entry.trap_view, entry.level, entry.move_note
        )
        self.reports.append(report)
        if self.publish_step is not None:
            self.publish_step(report)
        self.goal_handle.publish_feedback(VerifyInstance.Feedback(step=report))
