"""Lazy, validated image access for captured RGB frames and segmentation masks.

An episode has up to 12 frames of 360x640 px; decoding all of them when an episode is opened would waste
time the sim node does not have, so episodes hand out :class:`ImageRef` handles and pixels are decoded only
when someone asks. Decoding failures (missing file, truncated or non-image data) surface as
:class:`DatasetError` naming the file and, when known, the meta.json field that pointed at it.
"""

from __future__ import annotations

import struct
import warnings
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, UnidentifiedImageError

from .errors import DatasetError

IMAGE_KINDS = ("rgb", "mask")


def _open_failure(path: Path, field: str | None, exc: BaseException) -> DatasetError:
    if isinstance(exc, FileNotFoundError):
        return DatasetError("image file is missing", path=path, field=field)
    if isinstance(exc, IsADirectoryError):
        return DatasetError("expected an image file, found a directory", path=path, field=field)
    detail = str(exc) or type(exc).__name__
    return DatasetError(f"expected a readable PNG image, decoding failed ({detail})", path=path, field=field)


# Pillow signals broken files through several exception types (SyntaxError for bad PNG chunks, OSError for
# truncation, ValueError/struct errors for odd headers); all mean "this is not a usable image".
_DECODE_ERRORS = (
    UnidentifiedImageError,
    OSError,
    SyntaxError,
    ValueError,
    EOFError,
    struct.error,
    zlib.error,
    Image.DecompressionBombError,
)


def _decode(path: Path, field: str | None) -> Image.Image:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(path) as img:
                img.load()
                return img.copy()
    except (*_DECODE_ERRORS, Image.DecompressionBombWarning) as exc:
        raise _open_failure(path, field, exc) from None


def to_rgb_array(img: Image.Image) -> np.ndarray:
    """H x W x 3 uint8, whatever the stored mode (palette, grey, RGBA are converted)."""
    return np.asarray(img.convert("RGB"), dtype=np.uint8).copy()


def to_mask_array(img: Image.Image) -> np.ndarray:
    """H x W uint8; 16/32-bit masks are clipped to 0..255 instead of being rescaled (non-zero = object)."""
    if img.mode in ("I", "I;16", "I;16B", "I;16L", "F"):
        clipped: np.ndarray = np.clip(np.asarray(img), 0, 255)
        return clipped.astype(np.uint8)
    return np.asarray(img.convert("L"), dtype=np.uint8).copy()


def load_rgb(path: Path, *, field: str | None = None) -> np.ndarray:
    """Decode an RGB frame as an H x W x 3 uint8 array."""
    return to_rgb_array(_decode(path, field))


def load_mask(path: Path, *, field: str | None = None) -> np.ndarray:
    """Decode a segmentation mask as an H x W uint8 array."""
    return to_mask_array(_decode(path, field))


def probe_image(path: Path, *, decode: bool = True, field: str | None = None) -> tuple[int, int]:
    """Check an image file and return its (width, height).

    With ``decode=False`` only the header is read (fast, catches missing files and non-images); with
    ``decode=True`` the file structure is verified (every chunk checksum, the end marker) and every pixel is
    decoded, which also catches truncated data that a plain decode would tolerate.
    """
    if decode:
        try:
            with Image.open(path) as img:
                img.verify()
        except _DECODE_ERRORS as exc:
            raise _open_failure(path, field, exc) from None
        return _decode(path, field).size
    try:
        with Image.open(path) as img:
            return img.size
    except _DECODE_ERRORS as exc:
        raise _open_failure(path, field, exc) from None


@dataclass(frozen=True)
class ImageRef:
    """Handle to an image file below the dataset root; :meth:`load` decodes it on demand."""

    path: Path
    kind: str = "rgb"
    field: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in IMAGE_KINDS:
            raise ValueError(f"kind must be one of {IMAGE_KINDS}, got {self.kind!r}")

    def exists(self) -> bool:
        return self.path.is_file()

    def load(self) -> np.ndarray:
        """Decode now: H x W x 3 for "rgb", H x W for "mask" (uint8)."""
        if self.kind == "rgb":
            return load_rgb(self.path, field=self.field)
        return load_mask(self.path, field=self.field)
