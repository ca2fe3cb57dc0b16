"""The benchmark vocabulary and azimuth maths that every package shares (aiv_dataset.vocabulary / .azimuth)."""

from __future__ import annotations

import math

import pytest
from aiv_dataset.azimuth import SECTOR_SPAN_RAD, azimuth, horizontal_distance, virtual_index, wrap_angle
from aiv_dataset.vocabulary import (
    BENCHMARK_INTRINSICS,
    CATEGORIES,
    CATEGORY_MASK_THRESHOLDS_PX,
    DEFAULT_MASK_THRESHOLD_PX,
    DIRECTION_OFFSETS,
    DIRECTIONS,
    SECTOR_COUNT,
    DirectionError,
    mask_threshold_px,
    relative_direction,
    target_sector,
)


def test_mask_thresholds_follow_table_ten_for_every_category() -> None:
    assert mask_threshold_px("keys") == mask_threshold_px("watch") == 100
    for category in ("eyeglasses", "wallet", "cellphone", "visor", "camera", "mug"):
        assert mask_threshold_px(category) == 150
    for category in ("toy", "ball", "headphones", "hat", "book", "shoes"):
        assert mask_threshold_px(category) == 300
    for category in ("backpack", "bag", "laptop", "teddy bear"):
        assert mask_threshold_px(category) == 500
    assert set(CATEGORY_MASK_THRESHOLDS_PX) == set(CATEGORIES)
    assert len(CATEGORIES) == len(set(CATEGORIES)) == 18
    assert mask_threshold_px("umbrella") == DEFAULT_MASK_THRESHOLD_PX == 200


def test_shared_tables_are_read_only() -> None:
    with pytest.raises(TypeError):
        CATEGORY_MASK_THRESHOLDS_PX["mug"] = 1  # type: ignore[index]
    with pytest.raises(TypeError):
        DIRECTION_OFFSETS["front"] = 3  # type: ignore[index]


def test_benchmark_camera_is_the_spec_camera() -> None:
    camera = BENCHMARK_INTRINSICS
    assert (camera.width, camera.height, camera.hfov_deg, camera.vfov_deg) == (360, 640, 42.0, 68.62)
    assert (camera.cx, camera.cy) == (179.5, 319.5)
    assert camera.fx == pytest.approx(469.0, abs=0.5) and camera.fy == pytest.approx(469.0, abs=0.5)
    # The recorded VFOV is the exact one, rounded as meta.json writes it.
    exact = math.degrees(2.0 * math.atan(math.tan(math.radians(21.0)) * 640 / 360))
    assert round(exact, 2) == camera.vfov_deg


def test_target_sector_and_relative_direction_are_inverse() -> None:
    for current in range(SECTOR_COUNT):
        for name in DIRECTIONS:
            assert relative_direction(current, target_sector(current, name)) == name
    assert target_sector(5, "front-left") == 0
    assert target_sector(0, "front-right") == 5
    assert relative_direction(2, 2) == "front"


def test_target_sector_refuses_a_name_that_is_not_a_direction() -> None:
    with pytest.raises(DirectionError):
        target_sector(0, "Back-Left (MLLM)")  # normalise first: this is free text


def test_azimuth_is_the_reference_atan2_in_the_xz_plane() -> None:
    goal = (2.0, 0.8, -1.0)
    assert azimuth((3.0, 5.0, -1.0), goal) == 0.0  # height is ignored
    assert azimuth((2.0, 0.0, 0.0), goal) == pytest.approx(math.pi / 2)
    assert azimuth((1.0, 0.0, -1.0), goal) == math.pi  # (-pi, pi]
    assert horizontal_distance((5.0, 9.0, 3.0), goal) == 5.0


def test_virtual_index_rounds_half_to_even_like_the_reference() -> None:
    assert math.radians(60.0) == pytest.approx(SECTOR_SPAN_RAD)
    assert virtual_index(0.4, 0.4) == 0
    assert virtual_index(-0.1, 0.0) == 0  # just clockwise of the reference still rounds to it
    assert virtual_index(math.pi, 0.0) == 3
    assert virtual_index(SECTOR_SPAN_RAD * 0.5, 0.0) == 0  # exactly half a sector: round-half-even
    assert virtual_index(SECTOR_SPAN_RAD * 1.5, 0.0) == 2
    assert virtual_index(SECTOR_SPAN_RAD * 5.6, 0.0) == 0  # wraps past the last sector


def test_wrap_angle_is_half_open_at_minus_pi() -> None:
    assert wrap_angle(math.pi) == -math.pi
    assert wrap_angle(-math.pi) == -math.pi
    assert wrap_angle(0.25) == 0.25
