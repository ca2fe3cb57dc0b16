"""``overview.png``: a top-down plot of an episode (paper App. I.1: "top-down camera pose visualization").

Shows the room outline, the area where the agent's body fits (light) versus blocked space, furniture
footprints, the sector boundaries around the goal, the target with an arrow for its front, and every
viewpoint: filled circle = target visible (mask over threshold), hollow orange circle = trap view, red
cross = not navigable (drawn at the last rejected sample). Far views are larger than near ones.
"""

from __future__ import annotations

import math

import numpy as np
from aiv_dataset.constants import ACTIVE_RAW_SECTORS, RAW_SECTOR_COUNT
from PIL import Image, ImageDraw

from .episode import EpisodeCapture
from .scene import Room

SIZE = 480
MARGIN = 24
VISIBLE = (40, 170, 70)
TRAP = (240, 140, 20)
BLOCKED = (210, 40, 40)


def render_overview(room: Room, episode: EpisodeCapture) -> Image.Image:
    scale = (SIZE - 2 * MARGIN) / max(room.width, room.depth)
    w = int(room.width * scale) + 2 * MARGIN
    h = int(room.depth * scale) + 2 * MARGIN

    def px(x: float, z: float) -> tuple[float, float]:
        return MARGIN + x * scale, MARGIN + z * scale

    # Navigability raster (what the sampler sees, including this episode's floor obstacles).
    xs = (np.arange(w) - MARGIN + 0.5) / scale
    zs = (np.arange(h) - MARGIN + 0.5) / scale
    gx, gz = np.meshgrid(xs, zs)
    extra = list(episode.placement.obstacles)
    free = room.navigable_many(gx.ravel(), gz.ravel(), extra).reshape(h, w)
    inside = (gx >= 0) & (gx <= room.width) & (gz >= 0) & (gz <= room.depth)
    canvas = np.full((h, w, 3), 255, dtype=np.uint8)
    canvas[inside] = (200, 200, 205)
    canvas[free] = (236, 242, 236)
    img = Image.fromarray(canvas)
    draw = ImageDraw.Draw(img)

    for piece in room.pieces:
        fp = piece.footprint
        if fp is None:
            continue
        c, s = math.cos(fp.yaw), math.sin(fp.yaw)
        corners = [
            px(fp.cx + c * sx * fp.hx + s * sz * fp.hz, fp.cz - s * sx * fp.hx + c * sz * fp.hz)
            for sx, sz in ((-1, -1), (1, -1), (1, 1), (-1, 1))
        ]
        fill = (150, 120, 90) if piece.blocks else None
        draw.polygon(corners, fill=fill, outline=(90, 70, 50))
    draw.rectangle((*px(0, 0), *px(room.width, room.depth)), outline=(40, 40, 40), width=3)

    gx0, _, gz0 = episode.goal
    reach = 1.9 * scale
    for sector in range(RAW_SECTOR_COUNT):
        a = sector * 2 * math.pi / RAW_SECTOR_COUNT
        colour = (120, 120, 200) if sector in ACTIVE_RAW_SECTORS else (200, 200, 220)
        draw.line(
            (*px(gx0, gz0), *px(gx0 + reach / scale * math.cos(a), gz0 + reach / scale * math.sin(a))),
            fill=colour,
        )
    for radius in (0.9, 1.2, 1.4, 1.7):
        r = radius * scale
        cx, cy = px(gx0, gz0)
        draw.ellipse((cx - r, cy - r, cx + r, cy + r), outline=(190, 190, 225))

    for view in episode.views:
        sample = view.sample
        big = 7 if sample.range_label == "far" else 5
        if sample.captured and sample.position is not None:
            cx, cy = px(sample.position[0], sample.position[2])
            if view.area > episode.threshold:
                draw.ellipse((cx - big, cy - big, cx + big, cy + big), fill=VISIBLE, outline=(0, 0, 0))
            else:
                draw.ellipse((cx - big, cy - big, cx + big, cy + big), outline=TRAP, width=3)
            gxp, gyp = px(gx0, gz0)
            draw.line((cx, cy, cx + (gxp - cx) * 0.25, cy + (gyp - cy) * 0.25), fill=(60, 60, 60), width=1)
        elif sample.last_candidate is not None:
            cx, cy = px(*sample.last_candidate)
            draw.line((cx - big, cy - big, cx + big, cy + big), fill=BLOCKED, width=2)
            draw.line((cx - big, cy + big, cx + big, cy - big), fill=BLOCKED, width=2)

    cx, cy = px(gx0, gz0)
    draw.ellipse((cx - 6, cy - 6, cx + 6, cy + 6), fill=(200, 20, 160), outline=(0, 0, 0))
    yaw = episode.placement.yaw
    fx, fz = math.sin(yaw), math.cos(yaw)
    draw.line((cx, cy, cx + 22 * fx, cy + 22 * fz), fill=(200, 20, 160), width=3)
    draw.text((6, 4), f"{episode.instance.category} on {episode.placement.support.kind}", fill=(0, 0, 0))
    return img
