"""Shared fixtures of the capture-pipeline tests: one small generated dataset per session.

Generating costs seconds, so the ``tiny`` preset (18 episodes) is generated once and shared read-only by
every test that inspects a finished dataset.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from aiv_synth.pipeline import GenerationReport, generate_atomic
from aiv_synth.presets import get_preset


@pytest.fixture(scope="session")
def tiny_generation(tmp_path_factory: pytest.TempPathFactory) -> GenerationReport:
    """The ``tiny`` preset (seed 42) generated with two worker processes."""
    out = tmp_path_factory.mktemp("capture") / "pv_dataset"
    return generate_atomic(get_preset("tiny"), out, seed=42, workers=2, log=lambda _: None)


@pytest.fixture(scope="session")
def tiny_root(tiny_generation: GenerationReport) -> Path:
    return tiny_generation.root
