"""Small synthetic datasets made by the real capture pipeline, for tests that need privileged ground truth."""

from __future__ import annotations

from pathlib import Path


def generate_preset(parent: Path, preset: str = "micro", seed: int = 42) -> Path:
    """Generate ``preset`` under ``parent`` (a few seconds for micro) and return the dataset root."""
    from aiv_synth.pipeline import generate_atomic
    from aiv_synth.presets import get_preset

    report = generate_atomic(
        get_preset(preset), parent / f"pv_{preset}", seed=seed, workers=1, log=lambda _: None
    )
    return report.root


try:
    import pytest

    @pytest.fixture(scope="session")
    def micro_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
        """The capture pipeline's ``micro`` preset (4 episodes, 12 val pairs, privileged ground truth), once."""
        return generate_preset(tmp_path_factory.mktemp("micro"), "micro")

except ImportError:  # pragma: no cover - pytest is always present where fixtures are used
    pass
