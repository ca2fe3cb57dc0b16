"""Session bags recorded before Verdict, StepReport and AttributeState gained their evidential fields (#29) still
read: the reader decodes them with the definitions stored in the bag and copies them into the current classes,
the new probability / belief / disbelief fields NaN ("not computed"). Bags written now still take rclpy's
direct decoding, unchanged. Problems are one-line SessionBagErrors naming bag and topic.

Needs the built workspace (rclpy, aiv_interfaces); skipped without it unless AIV_REQUIRE_ROS=1. No DDS.
"""

from __future__ import annotations

import dataclasses
import math
import os
from array import array
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from rosbags.interfaces import MessageDefinition, MessageDefinitionFormat, Nodetype
from rosbags.rosbag2 import Reader, StoragePlugin, Writer
from rosbags.typesys import Stores, get_types_from_msg, get_typestore
from rosbags.typesys.store import Typestore
from support.sample_bags import SESSION, assert_same

from .old_interfaces import OLD_DEFINITIONS, OLD_VERDICT

try:
    from aiv_bags.cli import main as aiv_bag
    from aiv_bags_ros.message_upgrade import NAN_WHEN_ABSENT, ConnectionDecoder, upgrade_message
    from aiv_bags_ros.recorder import message_class
    from aiv_bags_ros.session_bag import (
        ROLES,
        ROLES_BY_NAME,
        SessionBagError,
        project_type_definitions,
        session_typestore,
    )
    from aiv_bags_ros.session_reader import read_session
    from aiv_bags_ros.session_writer import BagStream
    from aiv_interfaces.action import VerifyInstance
    from aiv_interfaces.msg import AttributeState, Detection2D, StageTiming, StepReport, Verdict
    from builtin_interfaces.msg import Time
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import Image
except ImportError as error:  # pragma: no cover - depends on the environment
    if os.environ.get("AIV_REQUIRE_ROS") == "1":
        raise
    pytest.skip(f"needs the built workspace: {error} (source .env.sh)", allow_module_level=True)

VERDICT = "aiv_interfaces/msg/Verdict"
STEP_REPORT = "aiv_interfaces/msg/StepReport"
ATTRIBUTE_STATE = "aiv_interfaces/msg/AttributeState"
TOPICS = {role.role: role.topic for role in ROLES}
DTYPES = {
    "bool": np.bool_, "int8": np.int8, "uint8": np.uint8, "int16": np.int16, "uint16": np.uint16,
    "int32": np.int32, "uint32": np.uint32, "int64": np.int64, "uint64": np.uint64,
    "float32": np.float32, "float64": np.float64,
}  # fmt: skip


# -- helpers ----------------------------------------------------------------------------------------------


def _stamp(ns: int) -> Time:
    return Time(sec=ns // 10**9, nanosec=ns % 10**9)


def _image(stamp_ns: int) -> bytes:
    message = Image(height=2, width=2, encoding="rgb8", step=6, data=bytes(range(12)))
    message.header.stamp = _stamp(stamp_ns)
    return bytes(serialize_message(message))


def _goal(request_id: str, start_ns: int) -> bytes:
    goal = VerifyInstance.Goal(request_id=request_id, episode_key=request_id, descriptions=["a red mug"])
    goal.start_stamp = _stamp(start_ns)
    return bytes(serialize_message(goal))


def old_typestore(definitions: dict[str, str] | None = None) -> Typestore:
    """ROS 2 Kilted, the installed project types, and the old layouts of the three changed ones."""
    store = get_typestore(Stores.ROS2_KILTED)
    types: dict[str, Any] = {}
    for name, text in {**project_type_definitions(), **(definitions or OLD_DEFINITIONS)}.items():
        types.update(get_types_from_msg(text, name))
    store.register(types)
    return store


def _default(store: Typestore, fieldtype: Any) -> Any:
    kind, detail = fieldtype
    if kind == Nodetype.NAME:
        return rosbags_message(store, detail)
    if kind == Nodetype.BASE:
        name = detail[0]
        return "" if name == "string" else False if name == "bool" else 0.0 if "float" in name else 0
    (item_kind, item), size = detail
    if item_kind == Nodetype.BASE and item[0] != "string":
        return np.zeros(size, dtype=DTYPES[item[0]])
    return [_default(store, (item_kind, item)) for _ in range(size)]


def rosbags_message(store: Typestore, msgtype: str, **values: Any) -> Any:
    """A rosbags message of ``store``'s layout: ``values`` where given, zeros / empty elsewhere."""
    fields = store.fielddefs[msgtype][1]
    unknown = set(values) - {name for name, _ in fields}
    assert not unknown, f"{msgtype} has no {unknown}"
    kwargs = {name: values[name] if name in values else _default(store, ftype) for name, ftype in fields}
    return store.types[msgtype](**kwargs)


def as_plain(value: Any) -> Any:
    """A rosbags or an rclpy message as dicts, lists and scalars (byte arrays as bytes)."""
    if hasattr(value, "get_fields_and_field_types"):
        return {name: as_plain(getattr(value, name)) for name in value.get_fields_and_field_types()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        # Constants are dataclass fields with a default in rosbags; message fields have none.
        fields = [f.name for f in dataclasses.fields(value) if f.default is dataclasses.MISSING]
        return {name: as_plain(getattr(value, name)) for name in fields}
    if isinstance(value, np.ndarray):
        return value.tobytes() if value.dtype == np.uint8 else value.tolist()
    if isinstance(value, array):
        return value.tobytes() if value.typecode == "B" else value.tolist()
    if isinstance(value, (list, tuple)):
        return [as_plain(item) for item in value]
    return value


def restricted(got: Any, want: Any) -> Any:
    """``got`` with only the fields ``want`` has (the old layout's), nested messages too."""
    if isinstance(want, dict):
        assert isinstance(got, dict) and set(want) <= set(got), f"{sorted(set(want) - set(got))} missing"
        return {key: restricted(got[key], want[key]) for key in want}
    if isinstance(want, list) and isinstance(got, list) and len(got) == len(want):
        return [restricted(a, b) for a, b in zip(got, want, strict=True)]
    return got


def decoders(bag: Path) -> dict[str, tuple[ConnectionDecoder, list[bytes]]]:
    """Per topic: the reader's decoder for that connection and the topic's raw messages."""
    store = session_typestore()
    with Reader(bag) as reader:
        raws: dict[int, list[bytes]] = {conn.id: [] for conn in reader.connections}
        for conn, _, raw in reader.messages():
            raws[conn.id].append(bytes(raw))
        return {
            conn.topic: (
                ConnectionDecoder(conn.msgtype, conn.msgdef, message_class(conn.msgtype), store),
                raws[conn.id],
            )
            for conn in reader.connections
        }


def evidential_fields(verdict: Any) -> list[tuple[str, Any]]:
    """(where, value) of every field #29 added (and ``notes``, #33), throughout a verdict."""
    found = [
        ("probability", verdict.probability),
        ("unverified_attributes", list(verdict.unverified_attributes)),
        ("notes", list(verdict.notes)),
    ]

    def attributes(where: str, states: Any) -> None:
        for index, state in enumerate(states):
            for name in ("belief", "disbelief", "claim_kind"):
                found.append((f"{where}[{index}].{name}", getattr(state, name)))

    attributes("attributes", verdict.attributes)
    for index, step in enumerate(verdict.transcript):
        found += [(f"transcript[{index}].probability", step.probability)]
        found += [(f"transcript[{index}].abstained", step.abstained)]
        attributes(f"transcript[{index}].attributes", step.attributes)
    return found


def assert_not_computed(verdict: Any) -> None:
    """Every evidential field reads as a recording from before them should: NaN, empty or false."""
    for where, value in evidential_fields(verdict):
        if isinstance(value, float):
            assert math.isnan(value), f"{where} = {value}, expected NaN"
        else:
            assert value in ([], "", False), f"{where} = {value!r}"


def write_bag(
    path: Path, verdict_raw: bytes, *, verdict_store: Typestore | None = None, msgdef: str | None = None
) -> Path:
    """A one-episode session bag: a request, one frame and ``verdict_raw``, its Verdict connection declared with
    ``verdict_store``'s definition (or ``msgdef`` as given)."""
    current = session_typestore()
    with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        requests = writer.add_connection(
            TOPICS["requests"], ROLES_BY_NAME["requests"].msgtype, typestore=current
        )
        image = writer.add_connection(TOPICS["image"], ROLES_BY_NAME["image"].msgtype, typestore=current)
        if msgdef is None:
            verdicts = writer.add_connection(TOPICS["verdicts"], VERDICT, typestore=verdict_store or current)
        else:
            verdicts = writer.add_connection(
                TOPICS["verdicts"], VERDICT, msgdef=msgdef, rihs01="RIHS01_" + "0" * 64
            )
        writer.write(requests, 1, _goal("r", 10**9))
        writer.write(image, 2, _image(10**9))
        writer.write(verdicts, 3, verdict_raw)
    return path


def old_verdict(store: Typestore, **values: Any) -> Any:
    """An old-layout verdict of one YES step judging the frame stamped 1 s, with recognisable values."""
    attribute = rosbags_message(
        store, ATTRIBUTE_STATE, name="logo", type="logo_text", evidence_phrase="a red logo", weight=3, state=1,
        reconciled_state=1, votes_matched=1.0, weight_matched=0.25, converged=True, uncertainty=0.5,
        last_answer="Yes", last_reason="a red logo is printed on the side",
    )  # fmt: skip
    step = rosbags_message(
        store, STEP_REPORT, step=0, sector=4, capture_tag="s10_far",
        image_stamp=rosbags_message(store, "builtin_interfaces/msg/Time", sec=1, nanosec=0),
        detection_confidence=1.0, action=1, stop_reason="final", attributes=[attribute], belief=1,
        move_outcome="decided", has_crop_box=True,
        crop_box=rosbags_message(store, "aiv_interfaces/msg/Detection2D", x_min=1.0, y_min=2.0, x_max=30.0,
                                 y_max=40.0, score=0.75, label="mug"),
    )  # fmt: skip
    timing = rosbags_message(store, "aiv_interfaces/msg/StageTiming", stage="verify", seconds=0.125, calls=2)
    fields = {
        "request_id": "r", "decision": 1, "confidence": 0.75, "steps": 1, "effective_views": 1,
        "first_view_decision": 1, "step_predictions": np.array([1], dtype=np.uint8),
        "visited_sectors": np.array([4], dtype=np.int8), "stop_reason": "final", "attributes": [attribute],
        "query_mode": "attribute", "category": "mug", "elapsed_s": 0.5, "timings": [timing], "transcript": [step],
        **values,
    }  # fmt: skip
    return rosbags_message(store, VERDICT, **fields)


def raw_of(store: Typestore, message: Any) -> bytes:
    return bytes(store.serialize_cdr(message, message.__msgtype__))


def assert_one_line_error(call: Callable[[], Any], bag: Path, problem: str) -> None:
    with pytest.raises(SessionBagError) as caught:
        call()
    text = str(caught.value)
    assert text.startswith(f"bag {bag}: topic {TOPICS['verdicts']}: "), text
    assert problem in text and "\n" not in text, text


# -- the committed sample (recorded before #29) -----------------------------------------------------------


def test_the_sample_session_reads_with_its_recorded_decisions_and_nothing_computed_it_never_had() -> None:
    recording = read_session(SESSION, need_ground_truth=True)
    (episode,) = recording.episodes
    verdict = episode.verdict
    assert episode.request_id == "00800-Pnu8fTXhpCq/1/99d621290b65"
    assert (verdict.decision, verdict.first_view_decision) == (Verdict.DECISION_YES, Verdict.DECISION_YES)
    assert (verdict.confidence, verdict.stop_reason) == (1.0, "final")
    assert (verdict.steps, verdict.effective_views) == (6, 3)
    assert list(verdict.step_predictions) == [1] * 6 and list(verdict.visited_sectors) == [5, 3, 0, 4]
    assert [(a.name, a.state) for a in verdict.attributes] == [
        ("color", 1), ("material", 0), ("logo", 1), ("inside_color", 1), ("handle_color", 1), ("pattern", 1)
    ]  # fmt: skip
    assert [(s.step, s.sector, s.action, s.belief, s.move_outcome) for s in verdict.transcript] == [
        (0, 5, 0, 1, "unreachable"), (1, 5, 0, 1, "moved"), (2, 3, 0, 1, "unreachable"),
        (3, 3, 0, 1, "moved"), (4, 0, 0, 1, "moved"), (5, 4, 1, 1, "decided"),
    ]  # fmt: skip
    assert isinstance(verdict, Verdict) and isinstance(verdict.transcript[0].crop_box, Detection2D)
    assert isinstance(verdict.timings[0], StageTiming) and isinstance(verdict.attributes[0], AttributeState)
    assert verdict.transcript[0].attributes[0].last_answer == "Yes"
    assert math.isnan(verdict.probability) and list(verdict.unverified_attributes) == []
    assert_not_computed(verdict)
    assert len(episode.frames) == 4 and all(len(frame.image.data) > 0 for frame in episode.frames.values())


def test_every_sample_message_equals_rosbags_reading_of_its_stored_definition() -> None:
    """Old-layout topics go through the upgrade, the others through rclpy; either way every recorded field has
    the value an independent reader (rosbags with the bag's own definitions) finds."""
    # The sample predates Verdict.probability (verdicts, steps) and the camera height level (steps, and the
    # ground truth's view and layout entries), so those three topics hold older layouts than the installed ones.
    expected_upgrades = {TOPICS["verdicts"], TOPICS["steps"], TOPICS["ground_truth"]}
    found = decoders(SESSION)
    assert {topic for topic, (decoder, _) in found.items() if decoder.upgrading} == expected_upgrades
    with Reader(SESSION) as reader:
        bag_store = get_typestore(Stores.EMPTY)
        for conn in reader.connections:
            bag_store.register(get_types_from_msg(conn.msgdef.data, conn.msgtype))
        for conn, _, raw in reader.messages():
            decoder, _ = found[conn.topic]
            want = as_plain(bag_store.deserialize_cdr(bytes(raw), conn.msgtype))
            assert_same(restricted(as_plain(decoder(bytes(raw))), want), want, conn.topic)
    (step_decoder, step_raws) = found[TOPICS["steps"]]
    for raw in step_raws:
        step = step_decoder(raw)
        assert isinstance(step, StepReport) and math.isnan(step.probability) and step.abstained is False


def test_the_sample_session_replays_identically(capsys: pytest.CaptureFixture[str]) -> None:
    assert aiv_bag(["replay", str(SESSION)]) == 0
    out = capsys.readouterr().out
    assert "6 recorded step(s), 6 replayed: identical" in out and "result: identical" in out, out


# -- bags written now -------------------------------------------------------------------------------------


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_a_bag_written_now_reads_through_rclpy_unchanged(tmp_path: Path, storage: str) -> None:
    attribute = AttributeState(
        name="logo",
        type="logo_text",
        state=1,
        uncertainty=0.25,
        belief=0.625,
        disbelief=0.125,
        claim_kind="logo",
    )
    steps = [
        StepReport(step=0, image_stamp=_stamp(10**9), attributes=[attribute], belief=1, probability=0.5),
        StepReport(step=1, image_stamp=_stamp(2 * 10**9), action=1, abstained=True, probability=0.375),
    ]
    verdict = Verdict(
        request_id="r", decision=Verdict.DECISION_UNDECIDED, confidence=0.0, probability=0.4375,
        unverified_attributes=["material", "pattern"], attributes=[attribute], transcript=steps,
        stop_reason="unresolvable", step_predictions=[1, 0], visited_sectors=[2, 3],
    )  # fmt: skip
    stream = BagStream(tmp_path / "now", storage=storage, topics=TOPICS)
    stream.write("requests", _goal("r", 10**9), 1)
    stream.write("image", _image(10**9), 2)
    stream.write("image", _image(2 * 10**9), 3)
    for at, step in enumerate(steps, start=4):
        stream.write("steps", serialize_message(step), at)
    stream.write("verdicts", serialize_message(verdict), 9)
    bag = stream.close()

    assert not any(decoder.upgrading for decoder, _ in decoders(bag).values())
    (episode,) = read_session(bag).episodes
    assert episode.verdict == verdict
    assert episode.verdict.transcript[1].abstained is True
    assert episode.verdict.attributes[0].claim_kind == "logo"


def test_a_stored_definition_that_differs_only_in_comments_is_decoded_by_rclpy() -> None:
    """What `ros2 bag record` stores is the .msg text, comments and all: still the installed layout."""
    store = session_typestore()
    installed = project_type_definitions()[VERDICT]
    assert "#" in installed
    same = ConnectionDecoder(
        VERDICT, MessageDefinition(MessageDefinitionFormat.MSG, installed), Verdict, store
    )
    old = ConnectionDecoder(
        VERDICT, MessageDefinition(MessageDefinitionFormat.MSG, OLD_VERDICT), Verdict, store
    )
    none = ConnectionDecoder(VERDICT, MessageDefinition(MessageDefinitionFormat.NONE, ""), Verdict, store)
    assert (same.upgrading, old.upgrading, none.upgrading) == (False, True, False)


# -- old-layout messages made here from the old definitions -----------------------------------------------


def test_the_upgrade_copies_every_old_field_and_leaves_the_new_ones_not_computed() -> None:
    store = old_typestore()
    old = store.deserialize_cdr(raw_of(store, old_verdict(store)), VERDICT)
    verdict = upgrade_message(old, Verdict, VERDICT)
    assert isinstance(verdict, Verdict)
    want = as_plain(old)
    assert_same(restricted(as_plain(verdict), want), want, "verdict")
    step = verdict.transcript[0]
    assert (step.crop_box.label, step.crop_box.score, step.image_stamp) == ("mug", 0.75, Time(sec=1))
    assert (verdict.attributes[0].uncertainty, verdict.timings[0].calls) == (0.5, 2)
    assert list(verdict.step_predictions) == [1] and list(verdict.visited_sectors) == [4]
    assert_not_computed(verdict)
    assert {name for names in NAN_WHEN_ABSENT.values() for name in names} == {
        "probability",
        "belief",
        "disbelief",
    }


def test_an_old_layout_bag_reads_through_the_session_reader(tmp_path: Path) -> None:
    store = old_typestore()
    bag = write_bag(tmp_path / "old", raw_of(store, old_verdict(store)), verdict_store=store)
    (decoder, _) = decoders(bag)[TOPICS["verdicts"]]
    assert decoder.upgrading
    (episode,) = read_session(bag).episodes
    verdict = episode.verdict
    assert (verdict.request_id, verdict.decision, verdict.confidence, verdict.category) == (
        "r",
        1,
        0.75,
        "mug",
    )
    assert verdict.transcript[0].attributes[0].last_reason == "a red logo is printed on the side"
    assert_not_computed(verdict)
    assert list(episode.frames) == [10**9] and bytes(episode.frames[10**9].image.data) == bytes(range(12))


def test_a_stored_definition_that_does_not_parse_is_refused_in_one_line(tmp_path: Path) -> None:
    store = old_typestore()
    bag = write_bag(
        tmp_path / "bad", raw_of(store, old_verdict(store)), msgdef="uint8 decision\n!!! nonsense"
    )
    assert_one_line_error(
        lambda: read_session(bag), bag, f"its stored definition of {VERDICT} does not parse"
    )


def test_a_stored_definition_naming_an_unknown_type_is_refused_in_one_line(tmp_path: Path) -> None:
    store = old_typestore()
    bag = write_bag(tmp_path / "bad", raw_of(store, old_verdict(store)), msgdef="Mystery[] clues\n")
    assert_one_line_error(
        lambda: read_session(bag), bag, "uses aiv_interfaces/msg/Mystery, which is defined nowhere"
    )


def test_a_message_cut_short_under_its_old_definition_is_refused_in_one_line(tmp_path: Path) -> None:
    store = old_typestore()
    raw = raw_of(store, old_verdict(store))
    bag = write_bag(tmp_path / "cut", raw[: len(raw) // 2], verdict_store=store)
    assert_one_line_error(
        lambda: read_session(bag),
        bag,
        f"a message does not decode with the {VERDICT} definition stored in the bag",
    )


def test_a_field_whose_type_changed_beyond_copying_is_refused_in_one_line(tmp_path: Path) -> None:
    store = old_typestore(
        {**OLD_DEFINITIONS, VERDICT: OLD_VERDICT.replace("uint8 decision", "string decision")}
    )
    bag = write_bag(tmp_path / "odd", raw_of(store, old_verdict(store, decision="yes")), verdict_store=store)
    assert_one_line_error(lambda: read_session(bag), bag, f"{VERDICT}.decision: recorded str, now uint8")
