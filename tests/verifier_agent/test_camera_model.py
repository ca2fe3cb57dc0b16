"""The camera's focal length from a CameraInfo: what the size cue needs to turn box pixels into metres.

Calibrations as drivers send them (plain, binned, cropped to a region of interest, uncalibrated zeros), frames
that are resized copies of the calibrated image, and frames that cannot come from that camera at all.
"""

from __future__ import annotations

import math
import threading

import numpy as np
import pytest
from aiv_checks.checks.category import focal_px
from aiv_dataset.vocabulary import BENCHMARK_INTRINSICS
from aiv_eval.run.env_port import focal_of
from aiv_offline_sim.episode_service import camera_matrix
from aiv_verifier.agent.port import FrameRequest
from aiv_verifier.camera_model import LatestCamera, PinholeCamera, camera_from_info
from aiv_verifier.frame_cache import FrameEntry
from aiv_verifier.ros_port import FrameSource, view_frame

K_640 = [615.0, 0.0, 320.0, 0.0, 615.0, 240.0, 0.0, 0.0, 1.0]


def test_a_calibrated_camera_gives_its_focal_length_for_its_own_frames() -> None:
    camera = camera_from_info(640, 480, K_640)
    assert camera == PinholeCamera(640, 480, 615.0)
    assert camera.focal_for(640, 480) == 615.0
    assert "fx 615.0 px for 640x480" in camera.describe() and "55.0 deg" in camera.describe()


def test_binning_and_a_region_of_interest_describe_the_delivered_image() -> None:
    # 2x2 binning of a 1280x960 sensor delivers 640x480 images; each pixel spans twice the angle.
    binned = camera_from_info(1280, 960, [1230.0, 0, 640, 0, 1230.0, 480, 0, 0, 1], binning_x=2, binning_y=2)
    assert binned == PinholeCamera(640, 480, 615.0)
    # A region of interest crops the image; the focal length of a pixel stays.
    cropped = camera_from_info(640, 480, K_640, roi_width=320, roi_height=240)
    assert cropped.focal_for(320, 240) == 615.0


def test_a_resized_stream_scales_the_focal_length_and_another_shape_has_none() -> None:
    camera = camera_from_info(640, 480, K_640)
    assert camera.focal_for(320, 240) == pytest.approx(307.5)
    assert camera.focal_for(1280, 960) == pytest.approx(1230.0)
    assert camera.focal_for(360, 640) is None  # portrait frames are not this landscape camera's
    assert camera.focal_for(0, 480) is None


@pytest.mark.parametrize(
    ("width", "height", "k", "message"),
    [
        (640, 480, [0.0] * 9, "not calibrated"),
        (640, 480, [-5.0, 0, 0, 0, 1, 0, 0, 0, 1], "not calibrated"),
        (640, 480, [math.nan, 0, 0, 0, 1, 0, 0, 0, 1], "not calibrated"),
        (640, 480, [615.0, 0.0, 320.0], "3 entries, expected 9"),
        (0, 480, K_640, "describes no image"),
    ],
)
def test_unusable_calibrations_are_refused_in_one_line(width, height, k, message) -> None:
    with pytest.raises(ValueError, match=message) as raised:
        camera_from_info(width, height, k)
    assert "\n" not in str(raised.value)


def test_the_latest_calibration_is_shared_between_threads() -> None:
    latest = LatestCamera()
    assert latest.get() is None and latest.focal_for(640, 480) is None
    writer = threading.Thread(target=latest.put, args=(camera_from_info(640, 480, K_640),))
    writer.start()
    writer.join()
    assert latest.focal_for(320, 240) == pytest.approx(307.5)


def test_both_transports_give_the_agent_the_same_focal_length() -> None:
    """Over ROS the verifier reads the simulator's CameraInfo (built by ``camera_matrix``); in-process the
    port reads the same intrinsics. For the benchmark camera both equal, to the bit, what the classical size
    cue assumed before it read any calibration (``hfov_deg`` 42), so benchmark numbers do not move."""
    width, height, k = camera_matrix(BENCHMARK_INTRINSICS)
    latest = LatestCamera()
    latest.put(camera_from_info(width, height, k))
    image = np.zeros((height, width, 3), np.uint8)
    entry = FrameEntry(stamp_ns=1, image=image)
    source = FrameSource(cache=None, timeout_s=1.0, camera=latest)  # type: ignore[arg-type]
    request = FrameRequest(stamp=1, step_count=0, sector=0, navigation_failed=False)
    over_ros = view_frame(entry, request, source.focal_for(entry)).focal_px

    class Observed:
        camera_intrinsics = None  # an episode without intrinsics: the benchmark camera, as the simulator says

    in_process = focal_of(Observed(), image)  # type: ignore[arg-type]
    assert over_ros == in_process == focal_px(width, BENCHMARK_INTRINSICS.hfov_deg)
    without_camera = FrameSource(cache=None, timeout_s=1.0)  # type: ignore[arg-type]
    assert without_camera.focal_for(entry) is None
