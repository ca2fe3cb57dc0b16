"""Open-loop replay over ROS: the recorded frames, along the recorded trajectory, to a verifier node.

``aiv-bag replay BAG --mode ros`` does over DDS what the in-process replay (:mod:`.replay`) does through a
:class:`~.replay.BagPort`:

* a small node, :class:`RecordedCamera`, stands in for the camera and the base. It publishes each recorded
  frame (image, camera info, and the ground-truth view and detections where the recording has them) under
  its recorded header stamp, and serves MoveToSector with the recorded outcome of each step (open loop: a
  verifier that asks for another direction still gets the recorded outcome), naming the stamp of the
  recorded next frame;
* the recorded VerifyInstance request is sent to a verifier node -- one this command starts with the
  replay's configuration (the parameters stored in the bag, then ``--params-file``, then ``--set``), or one
  already running (``--verifier running``: its own configuration and topic names are used);
* its Verdict (whose transcript holds every replayed step) is compared with the recording by the in-process
  mode's own :func:`~.replay.compare_episode`.

:class:`VerifierClient` (send a goal, wait for its Verdict) is what a test also uses to drive a verifier against
the simulator serving a tour bag.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from contextlib import suppress
from pathlib import Path
from typing import Any

import rclpy
import yaml
from aiv_common.action_results import unexplained_verdict_ending
from aiv_common.action_waits import RenewableActionClient
from aiv_common.move_outcomes import outcome_code
from aiv_common.parameter_spec import parameter_defaults
from aiv_common.qos import LATCHED_FRAME
from aiv_dataset.vocabulary import MoveOutcome
from aiv_interfaces.action import MoveToSector, VerifyInstance
from aiv_interfaces.msg import Detection2DArray, GroundTruthView, Verdict
from builtin_interfaces.msg import Time
from rclpy.action import ActionServer, GoalResponse
from rclpy.context import Context
from rclpy.executors import MultiThreadedExecutor
from rclpy.node import Node
from rclpy.serialization import deserialize_message
from rosbags.rosbag2 import Reader
from sensor_msgs.msg import CameraInfo, Image

from .replay import (
    EpisodeReplay,
    ReplayReport,
    compare_episode,
    needed_channels,
    replay_values,
)
from .session_bag import SessionBagError, header_stamp_ns
from .session_reader import RecordedEpisode, read_session, stamp_ns, stored_verifier_parameters

#: How the verifier is found: started by the replay with the replay's configuration, or already running.
VERIFIER_SOURCES = ("start", "running")
#: Seconds to wait for a started verifier to serve VerifyInstance, and for one episode's verdict.
DEFAULT_SERVER_WAIT_S = 60.0
DEFAULT_EPISODE_TIMEOUT_S = 300.0

#: Frames go out as the simulator publishes them: reliable and latched (depth 1), which every subscriber QoS the
#: verifier may be configured with accepts, and which a verifier that subscribes late still receives.
_LATCHED = LATCHED_FRAME.to_profile()


def _time(ns: int) -> Time:
    return Time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)


def _wait(condition: Any, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise SessionBagError(f"replay over ROS: {what} within {timeout_s:.0f} s")
        time.sleep(0.02)


def recorded_camera_infos(bag: Path, topic: str, stamps: set[int]) -> dict[int, Any]:
    """The recorded CameraInfo messages with the given header stamps (none when the bag has no such topic)."""
    found: dict[int, Any] = {}
    try:
        with Reader(bag) as reader:
            connections = [c for c in reader.connections if c.topic == topic]
            for _connection, _t, raw in reader.messages(connections=connections):
                stamp = header_stamp_ns(bytes(raw))
                if stamp in stamps:
                    found[stamp] = deserialize_message(bytes(raw), CameraInfo)
    except Exception as error:  # read_session already read this bag; a failure here is a damaged bag
        raise SessionBagError(f"bag {bag}: topic {topic}: cannot be read: {error}") from error
    return found


class RecordedCamera(Node):
    """The recorded camera and base of one episode at a time (see the module docstring)."""

    def __init__(
        self,
        values: Mapping[str, Any],
        *,
        camera_info_topic: str = "/camera/camera_info",
        context: Context | None = None,
    ) -> None:
        super().__init__("bag_replay_camera", context=context)
        self.image_pub = self.create_publisher(Image, str(values["image_topic"]), _LATCHED)
        self.info_pub = self.create_publisher(CameraInfo, camera_info_topic, _LATCHED)
        self.gt_pub = self.create_publisher(GroundTruthView, str(values["ground_truth_topic"]), _LATCHED)
        self.detections_pub = self.create_publisher(
            Detection2DArray, str(values["detections_topic"]), _LATCHED
        )
        self.lock = threading.Lock()
        self.episode: RecordedEpisode | None = None
        self.infos: Mapping[int, Any] = {}
        self.step = 0
        self.budget = 0
        self.last_stamp: int | None = None
        self.move_server = ActionServer(
            self,
            MoveToSector,
            str(values["move_action"]),
            execute_callback=self.on_move,
            goal_callback=self.on_goal,
        )

    def subscribers_ready(self, need_ground_truth: bool, need_detections: bool) -> bool:
        return (
            self.image_pub.get_subscription_count() > 0
            and (not need_ground_truth or self.gt_pub.get_subscription_count() > 0)
            and (not need_detections or self.detections_pub.get_subscription_count() > 0)
        )

    def load(self, episode: RecordedEpisode, infos: Mapping[int, Any], budget: int) -> int:
        """Make ``episode`` the one served and publish its first frame; return that frame's stamp."""
        with self.lock:
            self.episode, self.infos, self.step, self.budget = episode, infos, 0, budget
            first = stamp_ns(episode.steps[0].image_stamp)
            self._publish(first)
            return first

    def _publish(self, stamp: int) -> None:
        if stamp == self.last_stamp:
            return
        assert self.episode is not None
        frame = self.episode.frames[stamp]
        self.image_pub.publish(frame.image)
        if stamp in self.infos:
            self.info_pub.publish(self.infos[stamp])
        if frame.ground_truth is not None:
            self.gt_pub.publish(frame.ground_truth)
        if frame.detections is not None:
            self.detections_pub.publish(frame.detections)
        self.last_stamp = stamp

    def _recorded_outcome(self) -> MoveOutcome | None:
        assert self.episode is not None
        steps = self.episode.steps
        if self.step >= len(steps):
            return None
        try:
            return MoveOutcome(steps[self.step].move_outcome)
        except ValueError:
            return None

    def on_goal(self, _goal: Any) -> GoalResponse:
        # A step whose recorded move has no outcome (the recorded episode failed there): refused, so the
        # verifier's move fails as the in-process BagPort's does.
        with self.lock:
            if self.episode is None or self._recorded_outcome() is None:
                return GoalResponse.REJECT
        return GoalResponse.ACCEPT

    def on_move(self, goal_handle: Any) -> MoveToSector.Result:
        with self.lock:
            assert self.episode is not None
            steps = self.episode.steps
            index = self.step
            recorded = steps[index]
            outcome = self._recorded_outcome()
            result = MoveToSector.Result(
                steps_taken=index + 1, steps_remaining=max(0, self.budget - index - 1)
            )
            if self.last_stamp is not None:
                result.frame_stamp = _time(self.last_stamp)
            if outcome is None or outcome is MoveOutcome.DECIDED:
                # The recording answered here: there is no recorded view to move to (as BagPort).
                result.outcome = outcome_code(MoveOutcome.REJECTED)
                result.sector = -1
                result.message = f"the recording answered at step {index}; it has no move to replay"
                goal_handle.abort()
                return result
            following = steps[index + 1] if index + 1 < len(steps) else None
            result.outcome = outcome_code(outcome)
            result.trap_view = bool(recorded.trap_view)
            result.sector = int(following.sector) if following is not None and following.sector >= 0 else -1
            # The level of the view that followed (as BagPort); after the last recorded view, where it was.
            result.level = int(following.level) if following is not None else int(recorded.level)
            if outcome is MoveOutcome.REJECTED:
                result.message = "recorded move refused"
            result.visibility_warning = recorded.move_note  # why it was not made (as BagPort)
            if following is not None:
                next_stamp = stamp_ns(following.image_stamp)
                self._publish(next_stamp)
                result.frame_stamp = _time(next_stamp)
            self.step = index + 1
        goal_handle.succeed()
        return result


class VerifierClient(Node):
    """A VerifyInstance client: send a goal, wait for its Verdict."""

    def __init__(
        self, action: str, *, context: Context | None = None, name: str = "bag_replay_client"
    ) -> None:
        super().__init__(name, context=context)
        self.action = action
        self.verify_client = RenewableActionClient(self, VerifyInstance, action)

    def wait_for_server(self, timeout_s: float, alive: Any = lambda: True) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.verify_client.wait_for_server(0.2):
                return True
            if not alive():
                return False
        return False

    def verify(self, goal: Any, timeout_s: float) -> Verdict:
        """The Verdict of ``goal``; SessionBagError when the verifier does not answer in ``timeout_s``."""
        sent = self.verify_client.send_goal_confirmed(goal, timeout_s=timeout_s, what="the verifier")
        if sent is None:
            raise SessionBagError(f"replay over ROS: the verifier ({self.action}) did not take the request")
        if not sent.accepted:
            raise SessionBagError(f"replay over ROS: the verifier ({self.action}) refused the request")
        response = sent.result(timeout_s, lambda: True, "the verifier")
        if response is None:
            raise SessionBagError(f"replay over ROS: no verdict within {timeout_s:.0f} s")
        unbelievable = unexplained_verdict_ending(response)
        if unbelievable is not None:
            raise SessionBagError(f"replay over ROS: {unbelievable}")
        return response.result.verdict


def recorded_goal(episode: RecordedEpisode, start_stamp_ns: int | None = None) -> Any:
    """The recorded request as a VerifyInstance goal (same id, key, descriptions, budget, overrides, start);
    ``start_stamp_ns`` replaces the start frame's stamp (e.g. the one a simulator serving a tour names)."""
    goal = VerifyInstance.Goal()
    for name in VerifyInstance.Goal.get_fields_and_field_types():
        setattr(goal, name, getattr(episode.goal, name))
    if start_stamp_ns is not None:
        goal.start_stamp = _time(start_stamp_ns)
    return goal


def _parameters_file(values: Mapping[str, Any], directory: Path) -> Path:
    """A params file with every value that differs from the verifier's defaults (the rest are its defaults)."""
    from aiv_verifier.verifier_parameters import verifier_parameters

    defaults = parameter_defaults(verifier_parameters())
    changed = {name: value for name, value in values.items() if defaults.get(name) != value}
    path = directory / "verifier_params.yaml"
    path.write_text(yaml.safe_dump({"/**/verifier": {"ros__parameters": changed}}), encoding="utf-8")
    return path


class _StartedVerifier:
    """The verifier node as a child process (its output goes to a log file, shown when it fails)."""

    def __init__(self, values: Mapping[str, Any], directory: Path) -> None:
        from aiv_common.executables import ExecutableNotFoundError, executable_path

        try:
            executable = executable_path("aiv_verifier", "verifier")
        except ExecutableNotFoundError as error:
            raise SessionBagError(f"replay over ROS: {error}") from error
        self.log = directory / "verifier.log"
        params = _parameters_file(values, directory)
        with self.log.open("wb") as stream:
            self.process = subprocess.Popen(
                [str(executable), "--ros-args", "--params-file", str(params)],
                stdout=stream,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def alive(self) -> bool:
        return self.process.poll() is None

    def tail(self) -> str:
        text = self.log.read_text(errors="replace").strip().splitlines() if self.log.is_file() else []
        return " | ".join(text[-3:])

    def stop(self) -> None:
        if self.process.poll() is None:
            with suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGINT)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                with suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)


def replay_bag_ros(
    bag: Path,
    *,
    params_file: Path | None = None,
    sets: Sequence[str] = (),
    verifier: str = "start",
    server_wait_s: float = DEFAULT_SERVER_WAIT_S,
    episode_timeout_s: float = DEFAULT_EPISODE_TIMEOUT_S,
) -> ReplayReport:
    """Replay every episode of ``bag`` over ROS (see the module docstring) and compare with the recording.

    With ``verifier="running"`` the replay's configuration only names the topics and actions to use and which
    recorded channels the verifier reads; ``params_file`` and ``sets`` then describe the running node.
    """
    if verifier not in VERIFIER_SOURCES:
        raise SessionBagError(f"--verifier {verifier!r}: expected one of {', '.join(VERIFIER_SOURCES)}")
    started = time.perf_counter()
    bag = Path(bag)
    values = replay_values(stored_verifier_parameters(bag), params_file, sets, bag=bag)
    need_ground_truth, need_detections = needed_channels(values)
    recording = read_session(bag, need_ground_truth=need_ground_truth, need_detections=need_detections)
    wanted = {stamp for episode in recording.episodes for stamp in episode.frames}
    infos = recorded_camera_infos(bag, recording.topics["camera_info"], wanted)

    with tempfile.TemporaryDirectory(prefix="aiv_bag_replay_") as scratch:
        process = _StartedVerifier(values, Path(scratch)) if verifier == "start" else None
        context = Context()
        rclpy.init(context=context)
        executor = MultiThreadedExecutor(num_threads=3, context=context)
        try:
            camera = RecordedCamera(
                values, camera_info_topic=recording.topics["camera_info"], context=context
            )
            client = VerifierClient(str(values["verify_action"]), context=context)
            executor.add_node(camera)
            executor.add_node(client)
            spinner = threading.Thread(target=executor.spin, daemon=True)
            spinner.start()
            alive = process.alive if process is not None else (lambda: True)
            if not client.wait_for_server(server_wait_s, alive):
                reason = (
                    f"the started verifier exited ({process.tail()})"
                    if process is not None and not process.alive()
                    else f"no verifier serves {values['verify_action']} within {server_wait_s:.0f} s"
                )
                raise SessionBagError(f"replay over ROS: {reason}")
            _wait(
                lambda: camera.subscribers_ready(need_ground_truth, need_detections),
                server_wait_s,
                "the verifier did not subscribe to the camera topics",
            )
            results: list[EpisodeReplay] = []
            for episode in recording.episodes:
                begun = time.perf_counter()
                budget = int(episode.goal.step_budget) or int(values["default_step_budget"])
                first = camera.load(episode, infos, budget)
                verdict = client.verify(recorded_goal(episode, first), episode_timeout_s)
                key = episode.goal.episode_key or episode.goal.request_id
                result = compare_episode(episode, verdict, episode_key=key)
                result.seconds = time.perf_counter() - begun
                results.append(result)
        finally:
            executor.shutdown(timeout_sec=5.0)
            rclpy.try_shutdown(context=context)
            if process is not None:
                process.stop()
    frames = sum(result.replayed_steps for result in results)
    return ReplayReport(bag, results, recording.skipped, time.perf_counter() - started, frames, mode="ros")
