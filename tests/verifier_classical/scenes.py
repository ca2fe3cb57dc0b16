"""Hand-made camera frames with one object of known colours, patterns or print, and the view the verifier sees.

Frames are 360×640 like the benchmark's camera. The object sits on a two-tone, slightly noisy background (a
wall above a floor) so that the region estimate has real work to do; the GT box is the object's bounding box
and the crop is made by the production GT-mode cropper.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
from aiv_verifier.core.crop import crop_with_gt_box
from aiv_verifier.core.types import Attribute
from aiv_verifier.verification.base import ViewInput
from PIL import Image, ImageDraw, ImageFont

FRAME_HW = (640, 360)
BOX = (80, 220, 280, 420)  # x1, y1, x2, y2 of the object in the frame

RGB = tuple[int, int, int]


def background(seed: int = 0) -> np.ndarray:
    """Beige-grey wall over a darker wooden floor, with a little sensor noise."""
    rng = np.random.default_rng(seed)
    frame = np.zeros((*FRAME_HW, 3), dtype=np.float32)
    frame[:380] = (172, 168, 160)
    frame[380:] = (118, 92, 70)
    frame += rng.normal(0.0, 3.0, frame.shape)
    return np.clip(frame, 0, 255).astype(np.uint8)


def paint_object(
    painter: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray], box: tuple[int, int, int, int] = BOX
) -> np.ndarray:
    """Frame with an object drawn by ``painter(frame_patch, xs, ys)`` (pixel coordinates inside the box),
    inside an ellipse that fills the box (so the box corners show background, as with real objects)."""
    frame = background()
    x1, y1, x2, y2 = box
    ys, xs = np.mgrid[y1:y2, x1:x2]
    patch = painter(frame[y1:y2, x1:x2].copy(), xs - x1, ys - y1)
    cy, cx = (y2 - y1 - 1) / 2.0, (x2 - x1 - 1) / 2.0
    inside = ((ys - y1 - cy) / (cy + 0.5)) ** 2 + ((xs - x1 - cx) / (cx + 0.5)) ** 2 <= 1.0
    region = frame[y1:y2, x1:x2]
    region[inside] = patch[inside]
    return frame


def solid(colour: RGB, shade: float = 0.0) -> Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]:
    """Uniform colour; ``shade`` darkens it linearly from left (1.0) to right (1 - shade)."""

    def paint(patch: np.ndarray, xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
        factor = 1.0 - shade * xs / max(xs.max(), 1)
        return np.clip(np.array(colour, np.float32) * factor[..., None], 0, 255).astype(np.uint8)

    return paint


def halves(
    top: RGB, bottom: RGB, split: float = 0.5
) -> Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]:
    """``top`` above ``split`` of the height, ``bottom`` below."""

    def paint(patch: np.ndarray, xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
        out = np.empty((*xs.shape, 3), np.uint8)
        out[ys < ys.max() * split] = top
        out[ys >= ys.max() * split] = bottom
        return out

    return paint


def stripes(ground: RGB, ink: RGB, period: int = 24, width: int = 9) -> Callable:
    def paint(patch: np.ndarray, xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
        out = np.empty((*xs.shape, 3), np.uint8)
        out[:] = ground
        out[(ys % period) < width] = ink
        return out

    return paint


def dots(ground: RGB, ink: RGB, period: int = 28, radius: int = 6) -> Callable:
    def paint(patch: np.ndarray, xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
        out = np.empty((*xs.shape, 3), np.uint8)
        out[:] = ground
        dx = (xs % period) - period / 2
        dy = (ys % period) - period / 2
        out[dx**2 + dy**2 <= radius**2] = ink
        return out

    return paint


def checks(a: RGB, b: RGB, size: int = 20) -> Callable:
    def paint(patch: np.ndarray, xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
        out = np.empty((*xs.shape, 3), np.uint8)
        out[:] = a
        out[((xs // size) + (ys // size)) % 2 == 1] = b
        return out

    return paint


def font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """DejaVu Sans Bold when installed, otherwise Pillow's built-in scalable font."""
    for path in (
        "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf",
        "/usr/share/fonts/dejavu/DejaVuSans-Bold.ttf",
    ):
        if Path(path).exists():
            return ImageFont.truetype(path, size)
    return ImageFont.load_default(size=size)


def printed_box(
    ground: RGB, ink: RGB, word: str, box: tuple[int, int, int, int] = (40, 240, 320, 400)
) -> np.ndarray:
    """A flat box (like a book cover or a bag's pocket) with ``word`` printed across it."""
    frame = background()
    x1, y1, x2, y2 = box
    frame[y1:y2, x1:x2] = ground
    image = Image.fromarray(frame)
    draw = ImageDraw.Draw(image)
    size = 56
    text_font = font(size)
    left, top, right, bottom = draw.textbbox((0, 0), word, font=text_font)
    while right - left > (x2 - x1) - 30 and size > 14:
        size -= 4
        text_font = font(size)
        left, top, right, bottom = draw.textbbox((0, 0), word, font=text_font)
    position = ((x1 + x2 - (right - left)) // 2 - left, (y1 + y2 - (bottom - top)) // 2 - top)
    draw.text(position, word, fill=ink, font=text_font)
    return np.asarray(image)


def view_of(
    frame: np.ndarray,
    box: tuple[int, int, int, int] | None = BOX,
    category: str = "bag",
    descriptions: tuple[str, ...] = (),
) -> ViewInput:
    """The verifier's input for ``frame`` in GT-box mode (the production cropper, §5.4); ``descriptions``
    are the query's full descriptions, which the identity gate reads."""
    crop = crop_with_gt_box(frame, box)
    return ViewInput(crop.image, frame, crop.box, crop.confidence, category, descriptions)


def attr(phrase: str, kind: str = "color", name: str = "") -> Attribute:
    safe = name or (kind + "_" + "".join(ch if ch.isalnum() else "_" for ch in phrase.lower())[:40]).strip(
        "_"
    )
    return Attribute(safe, kind, 2, phrase)
