"""sensor_msgs/Image <-> numpy: exact round trips for every encoding, padding, endianness, bad input."""

from __future__ import annotations

import array
import sys

import numpy as np
import pytest
from aiv_common.image_conversion import ENCODINGS, ImageConversionError, imgmsg_to_numpy, numpy_to_imgmsg
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import Image

HEIGHT, WIDTH = 7, 5  # odd sizes so row padding and channel order mistakes show up


def _random_image(encoding: str, rng: np.random.Generator) -> np.ndarray:
    layout = ENCODINGS[encoding]
    shape = (HEIGHT, WIDTH) if layout.channels == 1 else (HEIGHT, WIDTH, layout.channels)
    if layout.dtype == np.float32:
        values = rng.standard_normal(shape).astype(np.float32)
        values.flat[0] = np.nan  # depth images carry NaN for "no return"
        values.flat[1] = np.inf
        return values
    info = np.iinfo(layout.dtype)
    return rng.integers(info.min, info.max, size=shape, dtype=layout.dtype, endpoint=True)


def _padded_message(image: np.ndarray, encoding: str, padding: int, big_endian: bool) -> Image:
    """Hand-build a message with `padding` junk bytes per row in the requested byte order."""
    layout = ENCODINGS[encoding]
    dtype = layout.dtype.newbyteorder(">" if big_endian else "<")
    rows = image.astype(dtype).reshape(HEIGHT, -1).view(np.uint8)
    junk = np.full((HEIGHT, padding), 0xAB, dtype=np.uint8)
    data = np.ascontiguousarray(np.concatenate([rows, junk], axis=1))
    return Image(
        height=HEIGHT,
        width=WIDTH,
        encoding=encoding,
        is_bigendian=big_endian,
        step=data.shape[1],
        data=array.array("B", data.tobytes()),
    )


@pytest.mark.parametrize("encoding", ["rgb8", "bgr8", "rgba8", "mono8", "mono16", "16UC1", "32FC1"])
def test_round_trip_is_exact_through_serialisation(encoding):
    image = _random_image(encoding, np.random.default_rng(3))
    msg = numpy_to_imgmsg(image, encoding)
    assert msg.step == WIDTH * ENCODINGS[encoding].bytes_per_pixel
    decoded = imgmsg_to_numpy(deserialize_message(serialize_message(msg), Image))
    assert decoded.dtype == image.dtype and decoded.shape == image.shape
    np.testing.assert_array_equal(decoded, image)  # NaN == NaN for this helper


@pytest.mark.parametrize("encoding", ["rgb8", "mono8", "mono16", "16UC1", "32FC1"])
@pytest.mark.parametrize("big_endian", [False, True], ids=["little", "big"])
@pytest.mark.parametrize("padding", [0, 3, 16])
def test_decoding_honours_step_padding_and_byte_order(encoding, big_endian, padding):
    image = _random_image(encoding, np.random.default_rng(5))
    decoded = imgmsg_to_numpy(_padded_message(image, encoding, padding, big_endian))
    np.testing.assert_array_equal(decoded, image)
    assert decoded.dtype.isnative


def test_decoding_shares_memory_unless_copy_requested():
    msg = numpy_to_imgmsg(np.zeros((HEIGHT, WIDTH, 3), np.uint8), "rgb8")
    view = imgmsg_to_numpy(msg)
    copied = imgmsg_to_numpy(msg, copy=True)
    msg.data[0] = 42
    assert view[0, 0, 0] == 42 and copied[0, 0, 0] == 0


def test_encoding_marks_multibyte_data_with_host_byte_order():
    msg = numpy_to_imgmsg(np.zeros((2, 2), np.uint16), "16UC1")
    assert msg.is_bigendian == (sys.byteorder == "big")
    assert not numpy_to_imgmsg(np.zeros((2, 2), np.uint8), "mono8").is_bigendian


@pytest.mark.parametrize(
    ("change", "message_part"),
    [
        ({"encoding": "yuv422_weird"}, "unsupported image encoding 'yuv422_weird'"),
        ({"step": WIDTH * 3 - 1}, "step 14 is smaller than one row"),
        ({"height": HEIGHT + 1}, "expected step x height = 120 B"),
        ({"data": array.array("B", bytes(10))}, "data has 10 B"),
        ({"encoding": "32FC1"}, "data has 105 B, expected step x height = 140 B"),
    ],
)
def test_malformed_messages_give_clear_errors(change, message_part):
    msg = numpy_to_imgmsg(np.zeros((HEIGHT, WIDTH, 3), np.uint8), "rgb8")
    if change.get("encoding") == "32FC1":
        msg.step = WIDTH * 4
    for field, value in change.items():
        setattr(msg, field, value)
    with pytest.raises(ImageConversionError, match=message_part.replace("(", r"\(").replace(")", r"\)")):
        imgmsg_to_numpy(msg)


@pytest.mark.parametrize(
    ("array_", "encoding", "message_part"),
    [
        (np.zeros((4, 4, 3), np.float32), "rgb8", "rgb8 needs dtype uint8, got float32"),
        (np.zeros((4, 4), np.uint8), "rgb8", r"rgb8 needs an array of shape \(H, W, 3\), got \(4, 4\)"),
        (np.zeros((4, 4, 4), np.uint8), "bgr8", r"shape \(H, W, 3\), got \(4, 4, 4\)"),
        (np.zeros((4, 4, 2), np.uint16), "mono16", r"shape \(H, W\)"),
        (np.zeros((4, 4), np.uint8), "bayer_rggb8", "unsupported image encoding"),
    ],
)
def test_bad_arrays_are_refused(array_, encoding, message_part):
    with pytest.raises(ImageConversionError, match=message_part):
        numpy_to_imgmsg(array_, encoding)


def test_single_channel_with_trailing_axis_is_accepted():
    image = np.arange(20, dtype=np.uint8).reshape(4, 5, 1)
    np.testing.assert_array_equal(imgmsg_to_numpy(numpy_to_imgmsg(image, "mono8")), image[:, :, 0])
