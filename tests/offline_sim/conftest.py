"""Shared helpers for the ROS-free tests of aiv_offline_sim (dataset layer, environment, index builder)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aiv_dataset import PInVerifyDataset, parse_pair_record
from aiv_dataset.fields import Where
from aiv_offline_sim.environment import PInVerifyEnv
from support.leveled_dataset import add_height_levels
from support.synthetic import micro_root  # noqa: F401 - session fixture (the capture pipeline's micro preset)
from support.tiny_dataset import EpisodeHandle, EpisodeSpec, TinyDataset


@pytest.fixture
def tiny(tmp_path: Path) -> TinyDataset:
    """An empty dataset root to fill with hand-written episodes."""
    return TinyDataset(tmp_path / "pv_dataset")


EnvFactory = Callable[..., tuple[PInVerifyEnv, EpisodeHandle]]


@pytest.fixture
def make_env(tiny: TinyDataset) -> EnvFactory:
    """Write one episode and return an environment over ``copies`` positive pairs of it."""

    def factory(spec: EpisodeSpec | None = None, *, copies: int = 1, **env_kwargs: Any):
        episode = tiny.add_episode(spec or EpisodeSpec())
        record = parse_pair_record(tiny.pair(episode), Where.of("test"))
        env = PInVerifyEnv([record] * copies, PInVerifyDataset(tiny.root), **env_kwargs)
        return env, episode

    return factory


@pytest.fixture(scope="session")
def leveled_root(micro_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:  # noqa: F811
    """The ``micro`` preset with views above and below added (:mod:`support.leveled_dataset`), once."""
    return add_height_levels(micro_root, tmp_path_factory.mktemp("leveled") / "pv_leveled")
