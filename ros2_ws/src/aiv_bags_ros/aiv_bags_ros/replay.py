"""Open-loop replay of a recorded session: the recorded frames, along the recorded trajectory, to a verifier.

:class:`BagPort` is one more port of the one episode loop (:func:`~aiv_verifier.agent.episode_loop.run_episode`): its
``frame()`` gives the frame the recording judged at that step and its ``move()`` the outcome the recorded move
had (open loop: a replayed agent that asks for another direction still gets the recorded outcome, and the
step is reported as changed). The replayed steps and verdict are built with the verifier node's own message
functions, so they compare field by field with the recording.

Height levels: each move's report names the level of the recorded view that followed it (as it names its
sector), and frames without ground truth offer the recorded ``height_levels``, so a replayed session with
levels knows its level without ground truth, as the verifier did when it recorded it.

Compared per step: the view (sector, level, capture tag, duplicate flag), the action and its direction, each
attribute's answer and states (raw and reconciled), the belief, the stop reason and the move outcome; for the
verdict: decision, steps, confidence, stop and failure reason, first-view decision, per-step predictions and
visited sectors. Timings and elapsed time are not compared. :func:`compare_episode` is that comparison; the
replay over ROS (:mod:`.ros_replay`) uses it as it is.
"""

from __future__ import annotations

import struct
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from aiv_common.image_conversion import ImageConversionError, imgmsg_to_rgb
from aiv_common.parameter_spec import ParameterError, check_values, flatten_parameters, parameter_defaults
from aiv_dataset.vocabulary import MoveOutcome
from aiv_verifier.agent.episode_loop import run_episode
from aiv_verifier.agent.factory import PRIVILEGED_VERIFIERS, AgentFactory, ConfigError, GoalOverrides
from aiv_verifier.agent.port import FrameRequest, FrameUnavailable, MoveFailed, MoveReport
from aiv_verifier.agent.steps import AgentStep, ViewFrame
from aiv_verifier.agent.trace import TraceEntry, summarize
from aiv_verifier.detection.base import BoxMode
from aiv_verifier.frame_cache import FrameEntry
from aiv_verifier.ros_messages import detections_from_message, step_report, verdict_message
from aiv_verifier.ros_port import view_frame
from aiv_verifier.verification.base import VerifierError
from aiv_verifier.verifier_parameters import (
    check_verifier_values,
    factory_config,
    parse_height_levels,
    verifier_parameters,
)
from builtin_interfaces.msg import Time

from .session_bag import SessionBagError
from .session_reader import (
    RecordedEpisode,
    SessionRecording,
    read_session,
    stamp_ns,
    stored_verifier_parameters,
)

EXIT_IDENTICAL = 0
EXIT_DIFFERENT = 1
EXIT_BAD_INPUT = 2

DECISIONS = {0: "no", 1: "yes", 2: "undecided", 3: "failed"}
STATES = {0: "missing", 1: "matched", 2: "contradicted"}


# -- configuration ---------------------------------------------------------------------------------------


def _verifier_section(text: str, where: str) -> dict[str, Any]:
    try:
        document = yaml.safe_load(text) or {}
    except yaml.YAMLError as error:
        raise SessionBagError(f"{where}: not YAML: {error}") from error
    if not isinstance(document, Mapping):
        raise SessionBagError(f"{where}: expected a mapping of node sections")
    for key, section in document.items():
        if str(key).rsplit("/", 1)[-1] == "verifier" and isinstance(section, Mapping):
            params = section.get("ros__parameters", {})
            if not isinstance(params, Mapping):
                raise SessionBagError(f"{where}: {key}.ros__parameters must be a mapping")
            try:
                return flatten_parameters(params)
            except ParameterError as error:
                raise SessionBagError(f"{where}: {error}") from error
    return {}


def _parse_set(item: str) -> tuple[str, Any]:
    name, sep, text = item.partition("=")
    if not sep or not name:
        raise SessionBagError(f"--set {item!r}: expected name=value")
    name = name.removeprefix("verifier.") if name.startswith("verifier.verifier.") else name
    return name, yaml.safe_load(text) if text else ""


def replay_values(
    recorded_params: str, params_file: Path | None, sets: Sequence[str], *, bag: Path
) -> dict[str, Any]:
    """The verifier's parameters for the replay: its defaults, then the params file stored in the bag (the
    configuration it was recorded with), then ``params_file``, then ``--set`` overrides."""
    table = verifier_parameters()
    values: dict[str, Any] = dict(parameter_defaults(table))
    layers: list[tuple[str, dict[str, Any]]] = []
    if recorded_params:
        layers.append(
            (f"bag {bag}: its stored verifier parameters", _verifier_section(recorded_params, str(bag)))
        )
    if params_file is not None:
        try:
            text = params_file.read_text(encoding="utf-8")
        except OSError as error:
            raise SessionBagError(f"--params-file {params_file}: {error.strerror or error}") from error
        layers.append((str(params_file), _verifier_section(text, str(params_file))))
    layers.append(("--set", dict(_parse_set(item) for item in sets)))
    for where, layer in layers:
        try:
            values.update(check_values(table, layer))
        except ParameterError as error:
            raise SessionBagError(f"{where}: {error}") from error
    try:
        check_verifier_values(values)
    except ParameterError as error:
        raise SessionBagError(str(error)) from error
    return values


def build_factory(values: Mapping[str, Any]) -> AgentFactory:
    try:
        return AgentFactory.from_config(factory_config(values))
    except (ConfigError, VerifierError) as error:
        raise SessionBagError(f"verifier configuration: {error}") from error


# -- the port --------------------------------------------------------------------------------------------


def _entry(bag: Path, topic: str, frame: Any) -> FrameEntry:
    try:
        image = imgmsg_to_rgb(frame.image)
    except (ImageConversionError, ValueError) as error:
        raise SessionBagError(f"bag {bag}: topic {topic}: image stamped {frame.stamp_ns}: {error}") from error
    detections = None
    if frame.detections is not None:
        detections, _notes = detections_from_message(frame.detections)
    return FrameEntry(frame.stamp_ns, image=image, ground_truth=frame.ground_truth, detections=detections)


class BagPort:
    """The recorded episode as a port; frames are decoded up front so a bad image is bad input."""

    def __init__(
        self, recording: SessionRecording, episode: RecordedEpisode, levels: tuple[int, ...] = ()
    ) -> None:
        self.steps = episode.steps
        self.levels = levels  # the verifier's height_levels, for frames whose ground truth does not say
        self.entries = [
            _entry(recording.path, recording.topics["image"], episode.frames[stamp_ns(step.image_stamp)])
            for step in self.steps
        ]
        self.stamps: list[Time] = []  # image stamp of each replayed step
        self._step = 0

    def frame(self, request: FrameRequest) -> ViewFrame:
        index = request.step_count
        if index >= len(self.steps):
            raise FrameUnavailable(f"the recording ends after step {len(self.steps) - 1}")
        self._step = index
        self.stamps.append(self.steps[index].image_stamp)
        return view_frame(self.entries[index], request, levels=self.levels)

    def move(self, direction: str) -> MoveReport:
        recorded = self.steps[self._step]
        try:
            outcome = MoveOutcome(recorded.move_outcome)
        except ValueError:
            outcome = None
        if outcome is MoveOutcome.DECIDED:
            # The recording answered here: there is no recorded view to move to. The step is kept (its answers
            # are compared) and the episode ends as a refused move.
            return MoveReport(
                outcome=MoveOutcome.REJECTED,
                message=f"the recording answered at step {self._step}; it has no move to replay",
            )
        if outcome is None:
            raise MoveFailed(
                f"the recorded move of step {self._step} has no outcome (the recorded episode failed)"
            )
        following = self.steps[self._step + 1] if self._step + 1 < len(self.steps) else None
        return MoveReport(
            outcome=outcome,
            trap_view=bool(recorded.trap_view),
            sector=int(following.sector) if following is not None and following.sector >= 0 else None,
            frame_stamp=stamp_ns(following.image_stamp) if following is not None else None,
            message="recorded move refused" if outcome is MoveOutcome.REJECTED else "",
            level=int(following.level) if following is not None else None,
            warning=recorded.move_note,  # why it was not made ("" in a recording that predates the field)
        )

    def cancelled(self) -> bool:
        return False


# -- comparison ------------------------------------------------------------------------------------------


def _f32(value: float) -> float:
    return float(struct.unpack("f", struct.pack("f", float(value)))[0])


def _step_view(step: Any) -> dict[str, Any]:
    return {
        "sector": int(step.sector),
        "level": int(step.level),
        "capture_tag": step.capture_tag,
        "duplicate_view": bool(step.duplicate_view),
        "detection_confidence": round(_f32(step.detection_confidence), 4),
        "action": "decide" if step.action == 1 else "move",
        "move_direction": step.move_direction,
        "stop_reason": step.stop_reason,
        "belief": DECISIONS.get(int(step.belief), str(step.belief)),
        "move_outcome": step.move_outcome,
        "trap_view": bool(step.trap_view),
    }


def _attributes(rows: Sequence[Any]) -> dict[str, dict[str, Any]]:
    return {
        row.name: {
            "answer": row.last_answer,
            "state": STATES.get(int(row.state), str(row.state)),
            "reconciled": STATES.get(int(row.reconciled_state), str(row.reconciled_state)),
        }
        for row in rows
    }


def step_differences(recorded: Any, replayed: Any) -> list[str]:
    """What differs between two StepReports, one phrase each (empty: identical)."""
    notes = []
    before, after = _step_view(recorded), _step_view(replayed)
    notes += [f"{key} {before[key]!r} -> {after[key]!r}" for key in before if before[key] != after[key]]
    old, new = _attributes(recorded.attributes), _attributes(replayed.attributes)
    for name in sorted(old.keys() | new.keys()):
        if name not in new:
            notes.append(f"attribute {name} dropped")
        elif name not in old:
            notes.append(f"attribute {name} added")
        else:
            notes += [
                f"{name} {key} {old[name][key] or '-'} -> {new[name][key] or '-'}"
                for key in old[name]
                if old[name][key] != new[name][key]
            ]
    return notes


def _verdict_view(verdict: Any) -> dict[str, Any]:
    return {
        "decision": DECISIONS.get(int(verdict.decision), str(verdict.decision)),
        "steps": int(verdict.steps),
        "confidence": round(_f32(verdict.confidence), 4),
        "stop_reason": verdict.stop_reason,
        "failure_reason": verdict.failure_reason,
        "first_view_decision": DECISIONS.get(int(verdict.first_view_decision), ""),
        "step_predictions": [DECISIONS.get(int(v), str(v)) for v in verdict.step_predictions],
        "visited_sectors": [int(v) for v in verdict.visited_sectors],
    }


def verdict_differences(recorded: Any, replayed: Any) -> list[str]:
    before, after = _verdict_view(recorded), _verdict_view(replayed)
    return [f"{key} {before[key]!r} -> {after[key]!r}" for key in before if before[key] != after[key]]


@dataclass
class EpisodeReplay:
    request_id: str
    episode_key: str
    recorded_steps: int
    replayed_steps: int
    step_changes: dict[int, list[str]] = field(default_factory=dict)
    verdict_changes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def identical(self) -> bool:
        return not self.step_changes and not self.verdict_changes

    @property
    def changed_steps(self) -> list[int]:
        return sorted(self.step_changes)

    def lines(self) -> list[str]:
        head = (
            f"request {self.request_id} (episode {self.episode_key}): {self.recorded_steps} recorded step(s), "
            f"{self.replayed_steps} replayed: " + ("identical" if self.identical else "DIFFERENT")
        )
        body = [f"  step {index}: " + "; ".join(notes) for index, notes in sorted(self.step_changes.items())]
        if self.verdict_changes:
            body.append("  verdict: " + "; ".join(self.verdict_changes))
        return [head, *body]


def replay_episode(
    factory: AgentFactory, values: Mapping[str, Any], recording: SessionRecording, episode: RecordedEpisode
) -> EpisodeReplay:
    """Run ``factory``'s agent over one recorded episode and compare with the recording."""
    goal = episode.goal
    started = time.perf_counter()
    port = BagPort(recording, episode, parse_height_levels(str(values.get("height_levels", ""))))
    budget = int(goal.step_budget) or int(values["default_step_budget"])
    key = goal.episode_key or goal.request_id
    session = factory.new_session(
        tuple(goal.descriptions),
        episode_key=key,
        max_steps=budget,
        category_hint=goal.category_hint,
        overrides=GoalOverrides(query_mode=goal.query_mode, nbv=goal.nbv_strategy, fusion=goal.fusion),
    )
    reports: list[Any] = []

    def on_step(_frame: ViewFrame, entry: TraceEntry[AgentStep]) -> None:
        reports.append(
            step_report(
                entry.step, port.stamps[-1], entry.move_result, entry.trap_view, entry.level, entry.move_note
            )
        )

    trace = run_episode(
        session,
        port,
        episode_key=key,
        budget=budget,
        start_stamp=stamp_ns(goal.start_stamp) or None,
        start_sector=int(goal.start_sector) if goal.start_sector >= 0 else 0,
        on_step=on_step,
    )
    summary = summarize(session, trace)
    verdict = verdict_message(
        summary,
        request_id=episode.request_id,
        query_mode=session.query.mode.value,
        category=session.query.category,
        attributes=session.steps[-1].attributes if session.steps else (),
        elapsed_s=0.0,
        clock=session.clock,
        transcript=reports,
        stamp=Time(),
        notes=session.query.notes,
    )
    result = compare_episode(episode, verdict, episode_key=key)
    result.seconds = time.perf_counter() - started
    return result


def compare_episode(episode: RecordedEpisode, verdict: Any, *, episode_key: str) -> EpisodeReplay:
    """Compare a replayed Verdict (its transcript holds the replayed steps) with the recorded episode.

    The one comparison of every replay: in-process here, over ROS in :mod:`.ros_replay`, and for a tour served
    by the simulator in the tests.
    """
    reports = list(verdict.transcript)
    result = EpisodeReplay(episode.request_id, episode_key, len(episode.steps), len(reports))
    for index in range(max(len(episode.steps), len(reports))):
        if index >= len(reports):
            result.step_changes[index] = ["not replayed (the replay ended earlier)"]
        elif index >= len(episode.steps):
            result.step_changes[index] = ["not in the recording (the replay went on)"]
        else:
            notes = step_differences(episode.steps[index], reports[index])
            if notes:
                result.step_changes[index] = notes
    result.verdict_changes = verdict_differences(episode.verdict, verdict)
    for name in ("category", "query_mode"):
        recorded_value, replayed_value = getattr(episode.verdict, name), getattr(verdict, name)
        if recorded_value != replayed_value:
            result.verdict_changes.append(f"{name} {recorded_value!r} -> {replayed_value!r}")
    return result


@dataclass
class ReplayReport:
    bag: Path
    episodes: list[EpisodeReplay]
    skipped: list[str]
    seconds: float
    frames: int
    mode: str = "inprocess"

    @property
    def identical(self) -> bool:
        return all(episode.identical for episode in self.episodes)

    def lines(self) -> list[str]:
        how = "open-loop" if self.mode == "inprocess" else "open-loop over ROS"
        lines = [f"bag {self.bag}: {len(self.episodes)} episode(s) replayed {how}"]
        for episode in self.episodes:
            lines += episode.lines()
        lines += [f"skipped {note}" for note in self.skipped]
        differ = sum(not episode.identical for episode in self.episodes)
        lines.append(
            f"result: {'identical' if differ == 0 else f'{differ} of {len(self.episodes)} episode(s) differ'} "
            f"({self.frames} frame(s) in {self.seconds:.2f} s, {self.frames / max(self.seconds, 1e-9):.1f} frames/s)"
        )
        return lines


def needed_channels(values: Mapping[str, Any]) -> tuple[bool, bool]:
    """(ground truth, detections): the recorded channels a verifier with ``values`` reads, without building
    its backends (as :class:`~aiv_verifier.agent.factory.AgentFactory` decides)."""
    try:
        box_mode = BoxMode(str(values["agent.bbox_mode"]))
    except ValueError as error:
        raise SessionBagError(f"verifier configuration: agent.bbox_mode: {error}") from error
    privileged = box_mode is BoxMode.GT or str(values["verifier.backend"]) in PRIVILEGED_VERIFIERS
    return privileged, box_mode is BoxMode.DETECTIONS


def replay_bag(bag: Path, *, params_file: Path | None = None, sets: Sequence[str] = ()) -> ReplayReport:
    """Replay every episode of ``bag`` with the configuration of :func:`replay_values`."""
    started = time.perf_counter()
    recorded_params = stored_verifier_parameters(Path(bag))  # the configuration comes before the frames
    values = replay_values(recorded_params, params_file, sets, bag=Path(bag))
    factory = build_factory(values)
    recording = read_session(
        Path(bag),
        need_ground_truth=factory.needs_privileged_view,
        need_detections=factory.settings.bbox_mode is BoxMode.DETECTIONS,
    )
    episodes = [replay_episode(factory, values, recording, episode) for episode in recording.episodes]
    frames = sum(episode.replayed_steps for episode in episodes)
    return ReplayReport(Path(bag), episodes, recording.skipped, time.perf_counter() - started, frames)
