"""Viewpoint sampling (paper Algorithm 1) and the episode success criteria (App. A.7-A.8)."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from aiv_dataset.azimuth import horizontal_distance
from aiv_synth.camera import BENCHMARK_INTRINSICS
from aiv_synth.episode import is_success, mask_stats
from aiv_synth.geometry import in_range, positive_azimuth, sector_of
from aiv_synth.sampling import MAX_ATTEMPTS, MAX_CONSECUTIVE_FAILURES, sample_viewpoints


def _open_floor(x: float, z: float) -> bool:
    return True


def test_open_floor_captures_all_twelve_views_inside_their_sector_and_range() -> None:
    goal = (5.0, 0.75, 5.0)
    views = sample_viewpoints(goal, _open_floor, random.Random(1), BENCHMARK_INTRINSICS)
    assert [v.tag for v in views] == [f"s{s}_{r}" for s in (0, 2, 4, 6, 8, 10) for r in ("far", "near")]
    for view in views:
        assert view.captured, view.tag
        assert view.position is not None and view.position[1] == pytest.approx(1.31)
        assert sector_of(positive_azimuth(view.position, goal)) == view.sector
        assert in_range(view.position, goal, view.range_label)
        assert view.radius == pytest.approx(horizontal_distance(view.position, goal))
        assert view.pitch_action == "look_down"  # goal 0.56 m below the sensor
        assert view.pose is not None and view.pose.in_frustum(goal)


def test_near_view_is_aligned_with_the_far_view_ray() -> None:
    goal = (5.0, 1.2, 5.0)
    views = sample_viewpoints(goal, _open_floor, random.Random(7), BENCHMARK_INTRINSICS)
    for far, near in zip(views[::2], views[1::2], strict=True):
        assert near.ray_aligned
        delta = abs(positive_azimuth(far.position, goal) - positive_azimuth(near.position, goal))
        assert min(delta, 2 * math.pi - delta) <= math.radians(2.0) + 1e-9


def test_wall_makes_sectors_unreachable_after_fifteen_consecutive_failures() -> None:
    goal = (0.5, 0.75, 5.0)  # 0.5 m from the wall at x = 0: azimuths 90..270 deg land behind it when far

    def inside(x: float, z: float) -> bool:
        return 0.17 <= x <= 10.0 and 0.17 <= z <= 10.0

    views = {v.tag: v for v in sample_viewpoints(goal, inside, random.Random(3), BENCHMARK_INTRINSICS)}
    for tag in ("s4_far", "s6_far", "s6_near"):  # every candidate lies behind the wall
        assert not views[tag].captured
        assert views[tag].failure == "consecutive_failures"
        assert views[tag].attempts == MAX_CONSECUTIVE_FAILURES
    assert views["s0_far"].captured and views["s10_near"].captured


def test_goal_outside_every_frustum_exhausts_the_attempts() -> None:
    goal = (5.0, 5.0, 5.0)  # far above the sensor: one look_up step is not enough
    views = sample_viewpoints(goal, _open_floor, random.Random(0), BENCHMARK_INTRINSICS)
    assert all(not v.captured and v.failure == "max_attempts" and v.attempts == MAX_ATTEMPTS for v in views)


def test_sampling_is_a_function_of_the_seed() -> None:
    goal = (5.0, 0.4, 5.0)
    first = [
        v.position for v in sample_viewpoints(goal, _open_floor, random.Random(11), BENCHMARK_INTRINSICS)
    ]
    again = [
        v.position for v in sample_viewpoints(goal, _open_floor, random.Random(11), BENCHMARK_INTRINSICS)
    ]
    other = [
        v.position for v in sample_viewpoints(goal, _open_floor, random.Random(12), BENCHMARK_INTRINSICS)
    ]
    assert first == again
    assert first != other


def test_success_needs_six_navigable_viewpoints_and_three_valid_masks() -> None:
    assert is_success(6, 3)
    assert is_success(12, 12)
    assert not is_success(5, 5)
    assert not is_success(12, 2)


def test_mask_stats_gives_area_and_inclusive_box() -> None:
    mask = np.zeros((640, 360), dtype=bool)
    assert mask_stats(mask) == (0, None)
    mask[100:120, 30:41] = True
    assert mask_stats(mask) == (220, [30, 100, 40, 119])
