"""Conversions between ``builtin_interfaces/Time`` and integer nanoseconds.

Frames are matched to move results by exact stamp equality, so stamps are compared as integers,
never as floats.
"""

from __future__ import annotations

from typing import Any

NANOS_PER_SECOND = 1_000_000_000


def stamp_to_nanoseconds(stamp: Any) -> int:
    """Integer nanoseconds of a ``builtin_interfaces/Time``-like object (``sec``, ``nanosec``)."""
    return int(stamp.sec) * NANOS_PER_SECOND + int(stamp.nanosec)


def nanoseconds_to_stamp(nanoseconds: int):
    """A ``builtin_interfaces/Time`` for ``nanoseconds`` (imports the message lazily)."""
    from builtin_interfaces.msg import Time

    if nanoseconds < 0:
        raise ValueError(f"stamps before the epoch are not representable: {nanoseconds} ns")
    seconds, nanos = divmod(int(nanoseconds), NANOS_PER_SECOND)
    return Time(sec=seconds, nanosec=nanos)
