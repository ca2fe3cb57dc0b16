"""A single picture of one verification step for humans: the view with its box, the crop, the attribute table.

Published on the verifier's debug image topic (only while someone subscribes, since drawing costs a few ms)
and usable from tests and reports. PIL's built-in bitmap font keeps it dependency-free.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from PIL import Image, ImageDraw

from .agent.steps import AttributeRow
from .core.crop import PixelBox
from .core.types import AttributeState

PANEL_HEIGHT = 360
_STATE_COLOURS = {
    AttributeState.MATCHED: (40, 170, 60),
    AttributeState.CONTRADICTED: (210, 50, 40),
    AttributeState.MISSING: (150, 150, 150),
}


def _fit_height(image: np.ndarray, height: int) -> Image.Image:
    picture = Image.fromarray(image)
    width = max(1, round(picture.width * height / max(1, picture.height)))
    return picture.resize((width, height), Image.Resampling.BILINEAR)


def compose_debug_view(
    image: np.ndarray,
    box: PixelBox | None,
    crop: np.ndarray,
    rows: Sequence[AttributeRow],
    headline: str,
) -> np.ndarray:
    """View (box drawn in yellow) | crop | attribute table, all scaled to one height; returns RGB uint8."""
    view = Image.fromarray(image).convert("RGB")
    if box is not None:
        ImageDraw.Draw(view).rectangle(box, outline=(255, 220, 0), width=3)
    scale = PANEL_HEIGHT / max(1, view.height)
    view = view.resize((max(1, round(view.width * scale)), PANEL_HEIGHT), Image.Resampling.BILINEAR)
    crop_panel = _fit_height(crop, PANEL_HEIGHT)
    table_width = 420
    canvas = Image.new("RGB", (view.width + crop_panel.width + table_width, PANEL_HEIGHT), (255, 255, 255))
    canvas.paste(view, (0, 0))
    canvas.paste(crop_panel, (view.width, 0))
    draw = ImageDraw.Draw(canvas)
    x = view.width + crop_panel.width + 8
    draw.text((x, 6), headline[:64], fill=(0, 0, 0))
    for line, row in enumerate(rows[:24]):
        y = 26 + 13 * line
        answer = row.last_answer or "-"
        text = f"{row.name[:22]:<22} {answer:<6} {row.votes_matched:.1f}/{row.votes_contradicted:.1f}"
        draw.rectangle((x, y + 2, x + 8, y + 10), fill=_STATE_COLOURS[row.state])
        draw.text((x + 12, y), text, fill=(0, 0, 0))
    return np.asarray(canvas)
