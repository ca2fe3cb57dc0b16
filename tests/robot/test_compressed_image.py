"""The verifier's CompressedImage decoding (aiv_verifier.compressed_image): colour order, mono, refusals."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from aiv_common.image_conversion import ImageConversionError
from aiv_verifier.compressed_image import compressed_to_rgb


def _encoded(image_bgr: np.ndarray, extension: str) -> bytes:
    ok, data = cv2.imencode(extension, image_bgr)
    assert ok
    return data.tobytes()


def test_png_and_jpeg_colour_payloads_decode_to_rgb() -> None:
    rgb = np.zeros((8, 12, 3), np.uint8)
    rgb[..., 0] = 200  # red
    bgr = rgb[..., ::-1].copy()
    assert np.array_equal(compressed_to_rgb("rgb8; png compressed bgr8", _encoded(bgr, ".png")), rgb)
    jpeg = compressed_to_rgb("jpeg", np.frombuffer(_encoded(bgr, ".jpg"), np.uint8))
    assert jpeg.shape == (8, 12, 3) and jpeg[..., 0].mean() > 150 and jpeg[..., 2].mean() < 50


def test_mono_payloads_become_three_equal_channels() -> None:
    mono = np.arange(48, dtype=np.uint8).reshape(6, 8)
    out = compressed_to_rgb("mono8; png compressed mono8", _encoded(mono, ".png"))
    assert out.shape == (6, 8, 3) and all(np.array_equal(out[..., c], mono) for c in range(3))


@pytest.mark.parametrize(
    ("fmt", "data", "why"),
    [
        ("16UC1; compressedDepth png", b"\x89PNG", "depth stream"),
        ("jpeg", b"", "no data"),
        ("jpeg", b"not an image at all", "cannot be decoded"),
    ],
)
def test_what_is_not_a_colour_picture_is_refused_with_the_reason(fmt: str, data: bytes, why: str) -> None:
    with pytest.raises(ImageConversionError, match=why):
        compressed_to_rgb(fmt, data)
