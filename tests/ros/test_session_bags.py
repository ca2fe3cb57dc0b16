"""Session bags (issue 16, parts 1 and 3b): episodes run over DDS and recorded one bag per episode by
``aiv-eval run --record-bags``, then replayed open-loop through the same episode loop.

- replaying with the recorded configuration gives the identical verdict and per-step answers (exit 0);
- replaying after changing one verifier parameter lists exactly the steps that changed, which an
  independent closed-loop in-process run of the changed configuration confirms (exit 1);
- every message of a recorded bag decodes with rosbags (types taken from the definitions stored in the bag)
  and with the independent ``mcap`` + ``mcap-ros2-support`` readers;
- bad bags (killed recording, truncated, corrupt, missing topic, other or unknown types, unusable image
  encoding, repeated or backwards stamps) are refused in one line naming the bag, the topic and the problem.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiv_bags.cli import main as aiv_bag
from aiv_bags_ros.replay import build_factory, replay_bag, replay_values, step_differences
from aiv_bags_ros.session_bag import SessionBagError, project_type_definitions
from aiv_bags_ros.session_reader import read_session
from aiv_eval.run.env_port import EnvPort, play_episode
from aiv_eval.run.in_process import load_evaluation_inputs
from aiv_eval.run.ros_mode import RosEvaluation, executable_path
from aiv_offline_sim.environment import PInVerifyEnv
from aiv_offline_sim.episode_service import EpisodeService
from aiv_verifier.ros_messages import step_report
from rclpy.serialization import deserialize_message, serialize_message
from rosbags.rosbag2 import Reader, StoragePlugin, Writer
from rosbags.typesys import Stores, get_types_from_msg, get_typestore
from sensor_msgs.msg import Image
from support.eval_specs import oracle_veto_spec
from support.ros_harness import NodeProcess, wait_until

#: Recorded as a noise-free noisy oracle (= the oracle); replayed with noise: one parameter changes answers.
RECORDED = ("verifier.verifier.backend=noisy_oracle", "evaluator.slice_end=4", "evaluator.server_wait_s=30.0")
CHANGE = "verifier.noise.error_rate=0.2"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory, micro_root: Path) -> Iterator[tuple[Any, list[Path]]]:
    tmp_path = tmp_path_factory.mktemp("session")
    spec = oracle_veto_spec(tmp_path, micro_root, "run", *RECORDED)
    evaluation = RosEvaluation(spec, evaluator_output=tmp_path / "evaluator.log", record_bags=True)
    result = evaluation.run()
    logs = "\n".join(p.read_text(errors="replace") for p in (tmp_path / "run" / "logs").glob("*.log"))
    assert result.evaluator_exit_code == 0, logs
    bags = sorted(path.parent for path in (tmp_path / "run" / "bags").rglob("metadata.yaml"))
    yield spec, bags


def _service(spec: Any) -> EpisodeService:
    inputs = load_evaluation_inputs(spec)
    env = PInVerifyEnv(
        inputs.records,
        inputs.dataset,
        max_steps=int(spec.sim["max_steps"]),
        seed=int(spec.sim["seed"]),
        seed_policy=str(spec.sim["seed_policy"]),
        view_priority=str(spec.sim["view_priority"]),
        privileged=True,
        descriptions=inputs.descriptions,
    )
    return EpisodeService(env, inputs.descriptions)


def _records(spec: Any) -> dict[str, dict[str, Any]]:
    """results.jsonl records by the simulator's opaque pair key (the key the verifier's goals carry)."""
    lines = (spec.run_dir / "results.jsonl").read_text().splitlines()
    service = _service(spec)
    return {
        service.start(index=record["episode_index"], slice_start=0).key: record
        for record in map(json.loads, lines)
    }


def test_one_complete_bag_per_episode_replays_identically(recorded: tuple[Any, list[Path]], capsys) -> None:
    spec, bags = recorded
    records = _records(spec)
    assert len(bags) == len(records) == 4
    assert not list((spec.run_dir / "bags").rglob("*.recording")) + list(
        (spec.run_dir / "bags").rglob("*.incomplete")
    )
    for bag in bags:
        report = replay_bag(bag)
        assert report.identical, "\n".join(report.lines())
        (episode,) = report.episodes
        record = records[episode.episode_key]
        assert episode.replayed_steps == episode.recorded_steps == len(record["transcript"])
    assert aiv_bag(["replay", str(bags[0])]) == 0
    assert "identical" in capsys.readouterr().out


def _closed_loop_steps(spec: Any, episode_key: str, index: int, changed: list[str]) -> list[Any]:
    """The changed configuration run closed-loop in-process on the dataset (no bag involved)."""
    service = _service(spec)
    start = service.start(index=index, slice_start=0)
    assert start.key == episode_key
    factory = build_factory(replay_values(_params_text(spec), None, changed, bag=Path("-")))
    _session, trace, _summary = play_episode(EnvPort(service, start), factory, episode_key=start.key)
    return [step_report(entry.step, None, entry.move_result, entry.trap_view) for entry in trace.entries]


def _params_text(spec: Any) -> str:
    return (spec.run_dir / "params.yaml").read_text()


def test_replay_after_one_parameter_change_lists_exactly_the_changed_steps(
    recorded: tuple[Any, list[Path]], capsys
) -> None:
    spec, bags = recorded
    records = _records(spec)
    changed = [CHANGE]
    any_changed = any_unchanged = False
    for bag in bags:
        report = replay_bag(bag, sets=changed)
        (episode,) = report.episodes
        recorded_steps = read_session(bag, need_ground_truth=True).episodes[0].steps
        closed = _closed_loop_steps(
            spec, episode.episode_key, records[episode.episode_key]["episode_index"], changed
        )
        expected = {
            k
            for k in range(len(recorded_steps))
            if k >= len(closed) or step_differences(recorded_steps[k], closed[k])
        }
        assert set(episode.changed_steps) == expected, "\n".join(report.lines())
        any_changed |= bool(expected)
        any_unchanged |= len(expected) < len(recorded_steps)
    assert any_changed and any_unchanged  # the change mattered somewhere, and not everywhere
    exits = {aiv_bag(["replay", str(bag), "--set", changed[0]]) for bag in bags}
    assert 1 in exits and exits <= {0, 1}
    assert "DIFFERENT" in capsys.readouterr().out


def test_every_message_decodes_with_rosbags_and_the_independent_mcap_reader(
    recorded: tuple[Any, list[Path]],
) -> None:
    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory

    _spec, bags = recorded
    for bag in bags:
        # rosbags, with the project's types taken from the definitions stored in the bag (not from this workspace)
        store = get_typestore(Stores.ROS2_KILTED)
        with Reader(bag) as reader:
            for connection in reader.connections:
                if connection.msgtype.startswith("aiv_interfaces/"):
                    store.register(get_types_from_msg(connection.msgdef.data, connection.msgtype))
            decoded = sum(
                1
                for connection, _t, raw in reader.messages()
                if store.deserialize_cdr(raw, connection.msgtype)
            )
            assert decoded == reader.message_count > 0
            topics = {c.topic: c.msgcount for c in reader.connections}
        assert all(
            topics[t] > 0
            for t in ("/camera/image_raw", "/verifier/requests", "/verifier/steps", "/verifier/verdict")
        )
        (mcap_file,) = bag.glob("*.mcap")
        with mcap_file.open("rb") as stream:
            messages = list(make_reader(stream, decoder_factories=[DecoderFactory()]).iter_decoded_messages())
        assert len(messages) == decoded
        verdicts = [m.decoded_message for m in messages if m.channel.topic == "/verifier/verdict"]
        assert verdicts and all(len(v.transcript) >= 1 for v in verdicts)


# -- bad input ----------------------------------------------------------------------------------------


def _rewrite(
    src: Path, dst: Path, change: Callable[[str, str, int, bytes], list[tuple[str, str, int, bytes]]]
) -> Path:
    """Copy a session bag message by message through ``change`` (topic, type, time, raw) -> messages."""
    store = get_typestore(Stores.ROS2_KILTED)  # a copy: the session typestore must not learn the extra type
    for name, text in project_type_definitions().items():
        store.register(get_types_from_msg(text, name))
    store.register(get_types_from_msg("uint8 x", "aiv_extra/msg/Thing"))
    with Reader(src) as reader, Writer(dst, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        connections: dict[tuple[str, str], Any] = {}
        for connection, timestamp, raw in reader.messages():
            for topic, msgtype, at, data in change(
                connection.topic, connection.msgtype, timestamp, bytes(raw)
            ):
                if (topic, msgtype) not in connections:
                    connections[(topic, msgtype)] = writer.add_connection(topic, msgtype, typestore=store)
                writer.write(connections[(topic, msgtype)], at, data)
    return dst


def _refused(bag: Path, *words: str) -> str:
    with pytest.raises(SessionBagError) as caught:
        replay_bag(bag)
    message = str(caught.value)
    assert "\n" not in message and f"bag {bag}" in message, message
    for word in words:
        assert word in message, message
    assert aiv_bag(["replay", str(bag)]) == 2
    return message


def _keep(topic: str, msgtype: str, at: int, raw: bytes) -> list[tuple[str, str, int, bytes]]:
    return [(topic, msgtype, at, raw)]


def test_bad_bags_are_refused_naming_bag_topic_and_problem(
    recorded: tuple[Any, list[Path]], tmp_path: Path
) -> None:
    _spec, bags = recorded
    source = max(bags, key=lambda bag: len(read_session(bag).episodes[0].steps))  # several frames

    missing = _rewrite(
        source, tmp_path / "missing", lambda t, m, a, r: [] if t == "/verifier/verdict" else _keep(t, m, a, r)
    )
    _refused(missing, "/verifier/verdict", "missing")

    other = _rewrite(
        source,
        tmp_path / "other",
        lambda t, m, a, r: (
            [(t, "aiv_extra/msg/Thing", a, b"\x00\x01\x00\x00\x05")]
            if t == "/camera/image_raw"
            else _keep(t, m, a, r)
        ),
    )
    _refused(other, "/camera/image_raw", "aiv_extra/msg/Thing", "unknown")

    def bad_encoding(t: str, m: str, a: int, r: bytes) -> list[tuple[str, str, int, bytes]]:
        if t != "/camera/image_raw":
            return _keep(t, m, a, r)
        image = deserialize_message(r, Image)
        image.encoding = "32FC1"
        return [(t, m, a, serialize_message(image))]

    _refused(_rewrite(source, tmp_path / "encoding", bad_encoding), "/camera/image_raw", "32FC1")

    seen: list[bytes] = []

    def duplicate(t: str, m: str, a: int, r: bytes) -> list[tuple[str, str, int, bytes]]:
        if t == "/camera/image_raw" and not seen:
            seen.append(r)
            return [(t, m, a, r), (t, m, a + 1, r)]
        return _keep(t, m, a, r)

    _refused(_rewrite(source, tmp_path / "duplicate", duplicate), "/camera/image_raw", "repeats")

    held: list[tuple[str, str, int, bytes]] = []

    def backwards(t: str, m: str, a: int, r: bytes) -> list[tuple[str, str, int, bytes]]:
        if t == "/camera/image_raw" and not held:
            held.append((t, m, a, r))
            return []
        if t == "/camera/image_raw" and len(held) == 1:
            held.append((t, m, a, r))
            return [(t, m, a, r), (held[0][0], held[0][1], a + 1, held[0][3])]
        return _keep(t, m, a, r)

    _refused(_rewrite(source, tmp_path / "backwards", backwards), "/camera/image_raw", "goes backwards")

    truncated = tmp_path / "truncated"
    shutil.copytree(source, truncated)
    (mcap_file,) = truncated.glob("*.mcap")
    data = mcap_file.read_bytes()
    mcap_file.write_bytes(data[: len(data) // 2])
    _refused(truncated)

    corrupt = tmp_path / "corrupt"
    shutil.copytree(source, corrupt)
    (mcap_file,) = corrupt.glob("*.mcap")
    data = bytearray(mcap_file.read_bytes())
    data[8:72] = b"\xff" * 64  # the records after the magic: opcodes and lengths no longer make sense
    mcap_file.write_bytes(bytes(data))
    _refused(corrupt)


def test_a_killed_recording_leaves_a_bag_that_is_refused_with_the_reason(tmp_path: Path) -> None:
    out = tmp_path / "session"
    recorder = NodeProcess(
        [str(executable_path("aiv_bags_ros", "session_recorder")), str(out)], tmp_path / "rec.log"
    )
    try:
        wait_until(lambda: (tmp_path / "session.recording").is_dir(), "the recorder to open its bag")
        recorder.kill()
    finally:
        recorder.stop()
    assert not out.exists()
    message = _refused(tmp_path / "session.recording", "killed before it was closed")
    assert "metadata.yaml" in message
