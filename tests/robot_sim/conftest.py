"""Fixtures of the robot stand-in tests: the capture pipeline's micro dataset (generated once per session)."""

from __future__ import annotations

from support.synthetic import micro_root  # noqa: F401 - session fixture
