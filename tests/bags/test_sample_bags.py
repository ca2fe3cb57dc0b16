"""The sample bags in bags/: small, committed, readable by two independent readers, and re-made by the commands
bags/README.md gives (compared message by message, not byte by byte: the container may differ, the content
may not).

The object tour is made from the capture pipeline's ``micro`` preset with a fixed seed, so a fresh clone
re-creates it without the default dataset. The recorded session needs ROS: it is re-made in
``tests/ros/test_sample_session_bag.py``.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml
from aiv_bags.cli import main as aiv_bag
from aiv_synth.cli import main as aiv_capture
from support.sample_bags import (
    MICRO_COMMAND,
    README,
    REPO_ROOT,
    SAMPLES,
    SESSION,
    TOUR,
    assert_same_messages,
    bag_messages,
    readme_text,
)

MAX_TOTAL_BYTES = 15 * 1024 * 1024
# The commands of bags/README.md that made the tour (MICRO: the scratch dataset directory).
TOUR_COMMANDS = (
    MICRO_COMMAND.replace("/tmp/pv_micro", "MICRO"),
    "aiv-bag export MICRO pin_capture/val/00800-Pnu8fTXhpCq/1 bags/tour_micro_mug "
    "--index val/pv_index_all.jsonl --compressed png",
)

mcap_reader = pytest.importorskip("mcap.reader")
mcap_ros2_decoder = pytest.importorskip("mcap_ros2.decoder")


def _sample_bags() -> list[Path]:
    return sorted(path.parent for path in SAMPLES.glob("*/metadata.yaml"))


# -- tests -------------------------------------------------------------------------------------------------


def test_the_samples_are_small_and_would_be_committed() -> None:
    bags = _sample_bags()
    assert TOUR in bags and SESSION in bags
    files = [path for path in SAMPLES.rglob("*") if path.is_file()]
    assert sum(path.stat().st_size for path in files) <= MAX_TOTAL_BYTES
    ignored = subprocess.run(
        ["git", "check-ignore", "--no-index", *map(str, files)], cwd=REPO_ROOT, capture_output=True, text=True
    )
    assert ignored.stdout == "", f"ignored by git: {ignored.stdout}"


@pytest.mark.parametrize("bag", _sample_bags(), ids=lambda p: p.name)
def test_both_readers_decode_every_message_of_a_sample(bag: Path) -> None:
    ours = bag_messages(bag)
    assert ours, f"{bag} holds no message"
    (file,) = bag.glob("*.mcap")
    theirs: list[tuple[str, int]] = []
    with file.open("rb") as stream:
        reader = mcap_reader.make_reader(stream, decoder_factories=[mcap_ros2_decoder.DecoderFactory()])
        for _, channel, message, decoded in reader.iter_decoded_messages():
            assert decoded is not None
            theirs.append((channel.topic, message.log_time))
    assert sorted(theirs) == sorted((topic, stamp) for topic, _, stamp, _ in ours)


def test_the_readme_gives_the_commands_that_made_the_tour() -> None:
    for command in TOUR_COMMANDS:
        assert command.replace("MICRO", "/tmp/pv_micro") in readme_text(), f"{command} not in {README}"


def test_the_tour_sample_is_recreated_by_its_commands(tmp_path: Path) -> None:
    micro = tmp_path / "pv_micro"
    made = tmp_path / "bags" / "tour_micro_mug"
    generate, export = (command.replace("MICRO", str(micro)).split()[1:] for command in TOUR_COMMANDS)
    assert aiv_capture(generate) == 0
    export = [str(made) if part == "bags/tour_micro_mug" else part for part in export]
    assert aiv_bag(export) == 0
    assert_same_messages(made, TOUR)
    load = lambda path: yaml.safe_load(path.read_text(encoding="utf-8"))  # noqa: E731
    assert load(made / "tour.yaml") == load(TOUR / "tour.yaml")
    assert sorted(p.name for p in made.iterdir()) == sorted(p.name for p in TOUR.iterdir())
