"""Tests of aiv_bags: object tours as rosbag2 files (export, import, bad input)."""

from __future__ import annotations

from support.synthetic import micro_root  # noqa: F401 - session fixture (the capture pipeline's micro preset)
