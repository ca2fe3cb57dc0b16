"""Crops as base64 data URIs (thumbnailed with Pillow) so report pages need no other files."""

from __future__ import annotations

import base64
import io
from pathlib import Path

THUMBNAIL_MAX_PX = 256


def resolve_crop(run_dir: Path, crop_file: str | None) -> Path | None:
    """The crop's path if it exists inside ``run_dir`` (symlinks resolved; escapes refused), else None."""
    if not crop_file:
        return None
    root = run_dir.resolve()
    path = (root / crop_file).resolve()
    try:
        path.relative_to(root)
    except ValueError:
        return None
    return path if path.is_file() else None


def crop_data_uri(run_dir: Path, crop_file: str | None, max_px: int = THUMBNAIL_MAX_PX) -> str | None:
    """A ``data:image/jpeg;base64,…`` thumbnail of the crop, or None when missing or unreadable."""
    path = resolve_crop(run_dir, crop_file)
    if path is None:
        return None
    try:
        from PIL import Image

        with Image.open(path) as img:
            rgb = img.convert("RGB")
            rgb.thumbnail((max_px, max_px), Image.Resampling.BICUBIC)
            buf = io.BytesIO()
            rgb.save(buf, format="JPEG", quality=85, optimize=False)
    except Exception:  # unreadable/corrupt image: the page says so instead of failing
        return None
    return "data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode("ascii")
