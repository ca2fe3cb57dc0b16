"""Deterministic test frames: the publisher and the checker derive the same pixels from an index."""

from __future__ import annotations

import numpy as np


def numbered_frame(index: int, height: int, width: int) -> np.ndarray:
    """An rgb8 frame whose every byte depends on ``index`` (so loss or reordering is detectable)."""
    rng = np.random.default_rng(1000 + index)
    frame = rng.integers(0, 256, size=(height, width, 3), dtype=np.uint8)
    frame[0, :4, 0] = np.frombuffer(int(index).to_bytes(4, "little"), dtype=np.uint8)
    return frame
