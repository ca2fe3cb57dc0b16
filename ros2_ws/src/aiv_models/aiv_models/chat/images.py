"""Image conversions of the chat transports: numpy → PIL / PNG data URL, data URL → numpy, and a pixel hash.

PNG is lossless, so the image a server decodes is exactly the array the verifier cropped (a JPEG would change
colours near the thresholds the answers depend on). Encoding is the costly part of an HTTP call on a CPU (about
0.1 s for a 512-px crop at zlib's default level), and every attribute call of a view sends the same crop, so the
data URL of recent images is kept (keyed by a pixel hash, ~1 ms) and PNG is written at compression level 1
(half the time, a slightly larger request; the pixels are identical at every level).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
import threading
from collections import OrderedDict
from typing import Any

import numpy as np

DATA_URL_PREFIX = "data:image/png;base64,"
#: How many encoded images are kept: the crops and scene images of the views in flight.
_RECENT_URLS = 32
_PNG_LEVEL = 1


class ImageError(ValueError):
    """An image cannot be converted (wrong shape or dtype, undecodable bytes)."""


def as_rgb_uint8(image: np.ndarray) -> np.ndarray:
    """An H×W×3 uint8 copy of ``image`` (grey is repeated, alpha dropped, floats in [0, 1] scaled)."""
    array = np.asarray(image)
    if array.ndim == 2:
        array = np.repeat(array[..., None], 3, axis=2)
    if array.ndim != 3 or array.shape[2] not in (1, 3, 4) or array.shape[0] < 1 or array.shape[1] < 1:
        raise ImageError(f"image must be H×W×3 (or grey / RGBA), got shape {array.shape}")
    if array.shape[2] == 1:
        array = np.repeat(array, 3, axis=2)
    array = array[..., :3]
    if array.dtype != np.uint8:
        if not np.issubdtype(array.dtype, np.number):
            raise ImageError(f"image has non-numeric dtype {array.dtype}")
        values = array.astype(np.float64)
        if np.issubdtype(array.dtype, np.floating) and values.size and values.max() <= 1.0:
            values = values * 255.0
        array = np.clip(np.rint(values), 0, 255).astype(np.uint8)
    return np.ascontiguousarray(array)


def to_pil(image: np.ndarray) -> Any:
    from PIL import Image

    return Image.fromarray(as_rgb_uint8(image), mode="RGB")


def to_png_bytes(image: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    to_pil(image).save(buffer, format="PNG", compress_level=_PNG_LEVEL)
    return buffer.getvalue()


class _RecentDataUrls:
    """A small thread-safe LRU of data URLs by pixel hash (the calls of one view run on several threads)."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._urls: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, image: np.ndarray) -> str:
        key = pixel_digest(image)
        with self._lock:
            if key in self._urls:
                self._urls.move_to_end(key)
                return self._urls[key]
        url = DATA_URL_PREFIX + base64.b64encode(to_png_bytes(image)).decode("ascii")
        with self._lock:
            self._urls[key] = url
            while len(self._urls) > self._size:
                self._urls.popitem(last=False)
        return url


_recent = _RecentDataUrls(_RECENT_URLS)


def to_data_url(image: np.ndarray) -> str:
    """``data:image/png;base64,...`` of the image, the form OpenAI-compatible servers accept in ``image_url``
    (the same pixels are encoded once while they are among the recent images)."""
    return _recent.get(image)


def from_data_url(url: str) -> np.ndarray:
    """Decode a ``data:image/<any>;base64,...`` URL into an H×W×3 uint8 array (raises :class:`ImageError`)."""
    from PIL import Image, UnidentifiedImageError

    if not url.startswith("data:image/") or ";base64," not in url:
        raise ImageError("only data:image/...;base64 URLs are accepted (no remote URLs)")
    payload = url.split(";base64,", 1)[1]
    try:
        raw = base64.b64decode(payload, validate=True)
        with Image.open(io.BytesIO(raw)) as picture:
            return as_rgb_uint8(np.asarray(picture.convert("RGB")))
    except (binascii.Error, ValueError, UnidentifiedImageError, OSError) as error:
        raise ImageError(f"image data URL cannot be decoded: {error}") from None


def pixel_digest(image: np.ndarray) -> str:
    """sha256 of an image's shape and RGB bytes: identical pixels give the same key on every machine."""
    array = as_rgb_uint8(image)
    digest = hashlib.sha256(f"{array.shape[0]}x{array.shape[1]}".encode("ascii"))
    digest.update(array.tobytes())
    return digest.hexdigest()
