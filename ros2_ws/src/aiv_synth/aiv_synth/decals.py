"""Bitmaps for printed text, logos and watch dials, pinned to object faces by the renderer.

Printed text and logos are the attributes the benchmark's hardest pairs hinge on (a word on one side of a
mug, a logo on the back of a laptop lid), so they are real glyphs and shapes, not colour patches. Text uses
Pillow's bundled default font, which makes the bitmaps identical on every machine with the same Pillow.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from .materials import RGB

_LOGO_PX = 64
_TEXT_PX = 40


def _rgba(colour: RGB) -> tuple[int, int, int, int]:
    return (round(colour[0] * 255), round(colour[1] * 255), round(colour[2] * 255), 255)


def _star(cx: float, cy: float, r_out: float, r_in: float, points: int = 5) -> list[tuple[float, float]]:
    pts = []
    for i in range(points * 2):
        r = r_out if i % 2 == 0 else r_in
        a = -math.pi / 2 + i * math.pi / points
        pts.append((cx + r * math.cos(a), cy + r * math.sin(a)))
    return pts


def _draw_logo(draw: ImageDraw.ImageDraw, shape: str, colour: tuple[int, int, int, int], s: int) -> None:
    c = s / 2.0
    if shape == "star":
        draw.polygon(_star(c, c * 1.05, s * 0.48, s * 0.2), fill=colour)
    elif shape == "heart":
        r = s * 0.22
        draw.ellipse((c - 2 * r, c - 1.6 * r, c, c + 0.4 * r), fill=colour)
        draw.ellipse((c, c - 1.6 * r, c + 2 * r, c + 0.4 * r), fill=colour)
        draw.polygon(
            [(c - 1.95 * r, c - 0.3 * r), (c + 1.95 * r, c - 0.3 * r), (c, c + 2.1 * r)], fill=colour
        )
    elif shape == "circle":
        draw.ellipse((s * 0.06, s * 0.06, s * 0.94, s * 0.94), outline=colour, width=max(2, s // 7))
    elif shape == "triangle":
        draw.polygon([(c, s * 0.06), (s * 0.95, s * 0.9), (s * 0.05, s * 0.9)], fill=colour)
    elif shape == "diamond":
        draw.polygon([(c, s * 0.03), (s * 0.8, c), (c, s * 0.97), (s * 0.2, c)], fill=colour)
    elif shape == "bolt":
        pts = [(0.58, 0.02), (0.18, 0.55), (0.46, 0.55), (0.36, 0.98), (0.82, 0.4), (0.53, 0.4), (0.7, 0.02)]
        draw.polygon([(x * s, y * s) for x, y in pts], fill=colour)
    elif shape == "moon":
        draw.ellipse((s * 0.05, s * 0.05, s * 0.95, s * 0.95), fill=colour)
        draw.ellipse((s * 0.3, s * 0.0, s * 1.1, s * 0.8), fill=(0, 0, 0, 0))
    elif shape == "cross":
        w = s * 0.17
        draw.rectangle((c - w, s * 0.05, c + w, s * 0.95), fill=colour)
        draw.rectangle((s * 0.05, c - w, s * 0.95, c + w), fill=colour)
    else:
        raise ValueError(f"unknown logo shape {shape!r}")


@lru_cache(maxsize=256)
def logo_bitmap(shape: str, colour: RGB) -> np.ndarray:
    """Square RGBA bitmap of a logo shape on a transparent background."""
    img = Image.new("RGBA", (_LOGO_PX, _LOGO_PX), (0, 0, 0, 0))
    _draw_logo(ImageDraw.Draw(img), shape, _rgba(colour), _LOGO_PX)
    return np.asarray(img, dtype=np.uint8)


@lru_cache(maxsize=1)
def _font() -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=_TEXT_PX)


@lru_cache(maxsize=256)
def text_bitmap(text: str, colour: RGB) -> np.ndarray:
    """RGBA bitmap of a word in bold-ish capitals, tightly cropped; aspect ratio = width / height."""
    font = _font()
    probe = ImageDraw.Draw(Image.new("RGBA", (4, 4)))
    x0, y0, x1, y1 = probe.textbbox((0, 0), text, font=font, stroke_width=1)
    pad = 3
    img = Image.new("RGBA", (int(x1 - x0) + 2 * pad, int(y1 - y0) + 2 * pad), (0, 0, 0, 0))
    fill = _rgba(colour)
    ImageDraw.Draw(img).text(
        (pad - x0, pad - y0), text, font=font, fill=fill, stroke_width=1, stroke_fill=fill
    )
    return np.asarray(img, dtype=np.uint8)


def text_aspect(text: str) -> float:
    """Width / height of the text bitmap, so decals keep the glyph proportions."""
    bitmap = text_bitmap(text, (0.0, 0.0, 0.0))
    return bitmap.shape[1] / bitmap.shape[0]


@lru_cache(maxsize=64)
def dial_bitmap(face: RGB, marks: RGB) -> np.ndarray:
    """A round watch dial: face colour, twelve hour marks and two hands."""
    s = 64
    img = Image.new("RGBA", (s, s), (0, 0, 0, 0))
    draw = ImageDraw.Draw(img)
    draw.ellipse((1, 1, s - 2, s - 2), fill=_rgba(face))
    ink = _rgba(marks)
    c = s / 2.0
    for i in range(12):
        a = i * math.pi / 6
        r0, r1 = s * 0.36, s * (0.46 if i % 3 == 0 else 0.42)
        draw.line(
            (c + r0 * math.sin(a), c - r0 * math.cos(a), c + r1 * math.sin(a), c - r1 * math.cos(a)),
            fill=ink,
            width=2 if i % 3 == 0 else 1,
        )
    draw.line((c, c, c + s * 0.22 * math.sin(2.0), c - s * 0.22 * math.cos(2.0)), fill=ink, width=3)
    draw.line((c, c, c + s * 0.33 * math.sin(5.2), c - s * 0.33 * math.cos(5.2)), fill=ink, width=2)
    return np.asarray(img, dtype=np.uint8)
