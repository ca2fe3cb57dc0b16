"""Box sources and crop confidence (spec §5.4), image conversion for the verifier, the frame cache."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from aiv_common.image_conversion import ImageConversionError, imgmsg_to_rgb, numpy_to_imgmsg
from aiv_verifier.core.crop import Detection
from aiv_verifier.detection.base import BoxMode, crop_view, sanitize_detections
from aiv_verifier.frame_cache import FrameCache, FrameTimeout

IMAGE = np.zeros((640, 360, 3), dtype=np.uint8)


def test_gt_mode_box_and_no_box() -> None:
    crop, notes = crop_view(IMAGE, BoxMode.GT, gt_box=(100, 200, 164, 300))
    assert crop.confidence == 1.0 and crop.box == (97, 197, 167, 303) and notes == []
    assert min(crop.image.shape[:2]) == 512  # 70 px wide => upscaled bicubic to a 512 px short side
    full, _ = crop_view(IMAGE, BoxMode.GT, gt_box=None)
    assert full.confidence == pytest.approx(0.1) and full.box is None and full.image.shape[:2] == (910, 512)


def test_gt_mode_keeps_reference_confidence_for_a_degenerate_box() -> None:
    crop, _ = crop_view(IMAGE, BoxMode.GT, gt_box=(500, 700, 600, 800))  # entirely outside the image
    assert crop.box is None and crop.confidence == 1.0  # the reference trusts any non-null GT box


def test_detection_mode_drops_unusable_boxes_and_says_why() -> None:
    boxes = [
        Detection((10, 10, 10, 50), 0.9),  # zero width
        Detection((400, 700, 500, 800), 0.8),  # outside
        Detection((float("nan"), 0, 5, 5), 0.7),
        Detection((-20, 600, 30, 660), 0.4),  # partly outside: kept, clamped
    ]
    kept, notes = sanitize_detections(boxes, 360, 640)
    assert [d.score for d in kept] == [0.4] and len(notes) == 3
    crop, notes = crop_view(IMAGE, BoxMode.DETECTIONS, detections=boxes)
    assert crop.confidence == pytest.approx(0.4) and crop.box == (0, 597, 33, 640)
    nothing, _ = crop_view(IMAGE, BoxMode.DETECTIONS, detections=boxes[:2])
    assert nothing.confidence == pytest.approx(0.1) and nothing.box is None


@pytest.mark.parametrize(
    ("encoding", "array", "expected"),
    [
        ("rgb8", np.array([[[10, 20, 30]]], np.uint8), [10, 20, 30]),
        ("bgr8", np.array([[[10, 20, 30]]], np.uint8), [30, 20, 10]),
        ("rgba8", np.array([[[10, 20, 30, 255]]], np.uint8), [10, 20, 30]),
        ("bgra8", np.array([[[10, 20, 30, 0]]], np.uint8), [30, 20, 10]),
        ("mono8", np.array([[77]], np.uint8), [77, 77, 77]),
    ],
)
def test_any_8bit_colour_or_mono_image_becomes_rgb(encoding, array, expected) -> None:
    assert imgmsg_to_rgb(numpy_to_imgmsg(array, encoding))[0, 0].tolist() == expected


@pytest.mark.parametrize(("encoding", "dtype"), [("32FC1", np.float32), ("mono16", np.uint16)])
def test_depth_like_images_are_refused_with_the_encoding_named(encoding, dtype) -> None:
    with pytest.raises(ImageConversionError, match=encoding):
        imgmsg_to_rgb(numpy_to_imgmsg(np.zeros((4, 4), dtype), encoding))


def test_empty_image_is_refused() -> None:
    from sensor_msgs.msg import Image

    message = Image(height=0, width=4, encoding="rgb8", step=12, data=b"")
    with pytest.raises(ImageConversionError, match="empty"):
        imgmsg_to_rgb(message)


def test_frame_cache_waits_for_the_stamp_and_its_side_channels() -> None:
    cache = FrameCache(capacity=3)
    cache.put_image(5, IMAGE)
    with pytest.raises(FrameTimeout, match="no image for the frame stamped 7"):
        cache.wait(7, 0.01)
    with pytest.raises(FrameTimeout, match="no ground-truth view"):
        cache.wait(5, 0.01, need_ground_truth=True)
    arrived = threading.Event()

    def late_producer() -> None:
        arrived.wait(5)
        cache.put_ground_truth(7, "gt")
        cache.put_image(7, IMAGE)

    worker = threading.Thread(target=late_producer)
    worker.start()
    arrived.set()
    entry = cache.wait(7, 5.0, need_ground_truth=True)
    worker.join()
    assert entry.stamp_ns == 7 and entry.ground_truth == "gt"
    assert cache.wait(None, 0.01).stamp_ns == 7  # newest


def test_frame_cache_keeps_only_recent_stamps_and_reports_bad_images() -> None:
    cache = FrameCache(capacity=2)
    for stamp in (1, 2, 3):
        cache.put_image(stamp, IMAGE)
    with pytest.raises(FrameTimeout):
        cache.wait(1, 0.01)
    cache.put_image(4, None, error="unsupported encoding '32FC1'")
    entry = cache.wait(4, 0.01, need_ground_truth=True)  # an unusable image is returned at once
    assert entry.image is None and "32FC1" in entry.image_error


def test_a_frame_cache_window_takes_the_first_frame_after_a_dropped_one() -> None:
    cache = FrameCache(capacity=8)
    cache.put_image(100, IMAGE)  # the view before the move
    cache.put_image(250, IMAGE)  # the named frame (200) was dropped; 250 is the next one of the same stop
    cache.put_image(400, IMAGE)
    with pytest.raises(FrameTimeout, match="no image for the frame stamped 200 ns within"):
        cache.wait(200, 0.01)  # no window: that exact frame only
    assert cache.wait(200, 0.01, window_ns=100).stamp_ns == 250
    with pytest.raises(FrameTimeout, match=r"stamped 200 ns \(or up to 4e-08 s later\)"):
        cache.wait(200, 0.01, window_ns=40)  # 250 is outside the window, 100 is before it


def test_a_frame_cache_window_prefers_the_named_frame_and_skips_one_missing_its_side_channel() -> None:
    cache = FrameCache(capacity=8)
    cache.put_image(200, IMAGE)
    cache.put_ground_truth(200, "gt-200")
    cache.put_image(230, IMAGE)
    cache.put_ground_truth(230, "gt-230")
    entry = cache.wait(200, 0.01, need_ground_truth=True, window_ns=100)
    assert entry.stamp_ns == 200 and entry.ground_truth == "gt-200"
    cache.put_image(300, IMAGE)  # its ground truth was dropped ...
    cache.put_image(330, IMAGE)
    missing_gt = r"stamped 300 ns \(or up to 1e-07 s later\): image arrived but no ground-truth view"
    with pytest.raises(FrameTimeout, match=missing_gt):
        cache.wait(300, 0.01, need_ground_truth=True, window_ns=100)
    cache.put_ground_truth(330, "gt-330")  # ... and the next frame of the window is complete
    assert cache.wait(300, 0.01, need_ground_truth=True, window_ns=100).ground_truth == "gt-330"
    with pytest.raises(ValueError, match="window_ns"):
        cache.wait(300, 0.01, window_ns=-1)
