"""The sample bags of bags/ and how tests compare a re-made bag with a committed one: message by message,
decoded with the definitions stored in the bag, never byte by byte."""

from __future__ import annotations

import dataclasses
import io
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image
from rosbags.highlevel import AnyReader
from rosbags.typesys import Stores, get_typestore

REPO_ROOT = Path(__file__).resolve().parents[2]
SAMPLES = REPO_ROOT / "bags"
README = SAMPLES / "README.md"
TOUR = SAMPLES / "tour_micro_mug"
SESSION = SAMPLES / "session_micro_mug"
MICRO_COMMAND = "aiv-capture generate --preset micro --seed 42 --workers 1 --out /tmp/pv_micro"
TIME_TYPE = "builtin_interfaces/msg/Time"


def readme_text() -> str:
    """bags/README.md with line continuations joined and blanks collapsed (commands compare as one line)."""
    return " ".join(README.read_text(encoding="utf-8").replace("\\\n", " ").split())


def plain(value: Any) -> Any:
    """A decoded rosbags message as dicts, lists and scalars; compressed images as their decoded pixels."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {field.name: plain(getattr(value, field.name)) for field in dataclasses.fields(value)}
        if getattr(value, "__msgtype__", "") == "sensor_msgs/msg/CompressedImage":
            pixels = np.asarray(Image.open(io.BytesIO(bytes(value.data))))
            out["data"] = ("decoded", pixels.shape, pixels.tobytes())  # the image, not its encoder's bytes
        return out
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    return value


def bag_messages(path: Path) -> list[tuple[str, str, int, Any]]:
    """(topic, type, log time, plain message) of every message, decoded with the bag's own embedded
    definitions (the standard Kilted types where a bag has none)."""
    with AnyReader([path], default_typestore=get_typestore(Stores.ROS2_KILTED)) as reader:
        return [
            (connection.topic, connection.msgtype, stamp, plain(reader.deserialize(raw, connection.msgtype)))
            for connection, stamp, raw in reader.messages()
        ]


def _times(value: Any) -> Iterable[tuple[int, int]]:
    if isinstance(value, dict):
        if value.get("__msgtype__") == TIME_TYPE:
            yield (value["sec"], value["nanosec"])
        else:
            for item in value.values():
                yield from _times(item)
    elif isinstance(value, list):
        for item in value:
            yield from _times(item)


def _ranked(value: Any, ranks: dict[tuple[int, int], int], ignored: frozenset[str]) -> Any:
    if isinstance(value, dict):
        if value.get("__msgtype__") == TIME_TYPE:
            return ("stamp rank", ranks[(value["sec"], value["nanosec"])])
        return {k: _ranked(v, ranks, ignored) for k, v in value.items() if k not in ignored}
    if isinstance(value, list):
        return [_ranked(item, ranks, ignored) for item in value]
    return value


def by_topic(path: Path, *, relative_time: bool = False, ignored: Iterable[str] = ()) -> dict[str, list[Any]]:
    """Each topic's (type, message) sequence. With ``relative_time`` every stamp becomes its rank among the
    bag's stamps (a live recording has other clock values each time, but the same order and the same frame
    references) and log times are left out; ``ignored`` names fields (e.g. measured durations) to drop."""
    messages = bag_messages(path)
    ranks = {t: n for n, t in enumerate(sorted({t for m in messages for t in _times(m[3])}))}
    dropped = frozenset(ignored)
    out: dict[str, list[Any]] = {}
    for topic, kind, stamp, message in messages:
        kept = _ranked(message, ranks, dropped) if relative_time else (stamp, message)
        out.setdefault(topic, []).append((kind, kept))
    return out


def _simulator_move_note(step: dict[str, Any]) -> str:
    """A StepReport's ``move_note`` in a session with the offline simulator: its visibility warning for a move
    it did not make (unreachable, already visited), "" for any other step."""
    from aiv_dataset.vocabulary import MoveOutcome
    from aiv_offline_sim.episode_types import compose_warning

    outcome = MoveOutcome(step["move_outcome"]) if step["move_outcome"] else None
    if outcome is None or not outcome.navigation_failed:
        return ""
    return compose_warning(outcome, step["move_direction"], False) or ""


def _verdict_notes(verdict: dict[str, Any]) -> list[str]:
    """A Verdict's ``notes`` in the sample session (whose query gets no note): one line per refused move's
    reason, from its transcript (the verifier's rule, :func:`aiv_verifier.agent.trace.move_note_lines`)."""
    from aiv_verifier.agent.trace import move_note_lines

    notes = [(step["move_direction"], _simulator_move_note(step)) for step in verdict["transcript"]]
    return list(move_note_lines((direction, note) for direction, note in notes if note))


#: Fields messages gained after a sample bag was recorded, with the value a message carries when the
#: feature behind them is off (the evidential fusion's), or a function of the message giving it. A committed
#: sample recorded before them lacks them; a re-made recording must hold exactly these values there, so the
#: sample stays a bag of the old layout and keeps exercising the reader's upgrade of old messages.
ADDED_FIELDS: dict[str, Any] = {
    "probability": math.nan,
    "unverified_attributes": [],
    "belief": math.nan,
    "disbelief": math.nan,
    "claim_kind": "",
    "abstained": False,
    "notes": _verdict_notes,  # the query's notes (none here), then why moves were refused
    "level": 0,  # the camera height level (GroundTruthView, its layout entries, StepReport): eye level
    "move_note": _simulator_move_note,  # StepReport: why the move was not made
}


#: Stage timings a Verdict gained since the recording: the verifier's ROS-side stages (frame wait, decode, move
#: round trips), which the in-process path has no counterpart of.
ADDED_STAGE_PREFIXES = ("ros.",)


def assert_same(got: Any, want: Any, where: str) -> None:
    """Equal values; floats to 1e-9 relative (NaN equals NaN); fields added since the committed recording must
    hold their not-computed value (:data:`ADDED_FIELDS`; a callable there gives it from the message)."""
    if isinstance(want, dict):
        assert isinstance(got, dict), f"{where}: fields differ"
        added = set(got) - set(want)
        assert added <= set(ADDED_FIELDS) and set(want) <= set(got), f"{where}: fields differ"
        for key in sorted(added):
            expected = ADDED_FIELDS[key]
            expected = expected(got) if callable(expected) else expected
            assert_same(got[key], expected, f"{where}.{key} (added since the recording)")
        for key in want:
            assert_same(got[key], want[key], f"{where}.{key}")
    elif isinstance(want, (list, tuple)):
        if where.endswith(".timings"):
            got = [entry for entry in got if not str(entry.get("stage", "")).startswith(ADDED_STAGE_PREFIXES)]
        assert isinstance(got, (list, tuple)) and len(got) == len(want), f"{where}: lengths differ"
        for n, (a, b) in enumerate(zip(got, want, strict=True)):
            assert_same(a, b, f"{where}[{n}]")
    elif isinstance(want, float):
        same = (math.isnan(got) and math.isnan(want)) or math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12)
        assert same, f"{where}: {got} != {want}"
    else:
        assert got == want, f"{where}: {got!r} != {want!r}"


def assert_same_messages(
    made: Path, committed: Path, *, relative_time: bool = False, ignored: Iterable[str] = ()
) -> None:
    got = by_topic(made, relative_time=relative_time, ignored=ignored)
    want = by_topic(committed, relative_time=relative_time, ignored=ignored)
    assert sorted(got) == sorted(want), f"topics differ: {sorted(got)} != {sorted(want)}"
    for topic in want:
        assert_same(got[topic], want[topic], topic)
