"""``image_gt/{category}/{object_id}_{0,1,2}.png``: three clean reference views per object (spec §2.1).

The benchmark ships three ground-truth views of every object; the reported agents do not use them, but
they are handy for looking at an instance and for gallery-style checks. The object stands alone on a grey
floor, framed to fill most of a 320x320 image, seen from the front-left, front-right and back.
"""

from __future__ import annotations

import math

import numpy as np

from .camera import CameraPose, Intrinsics
from .materials import Surface
from .objects import build_instance
from .objects.model import Recipe
from .renderer import BOX, Light, Primitive, Renderer

REFERENCE_INTRINSICS = Intrinsics(width=320, height=320, hfov_deg=30.0)
#: Camera azimuths (degrees, around the object; the object's front faces azimuth 90).
REFERENCE_AZIMUTHS = (60.0, 120.0, 270.0)


def reference_views(recipe: Recipe) -> list[np.ndarray]:
    model = build_instance(recipe)
    backdrop = [
        Primitive(BOX, (0.0, -0.05, 0.0), (4.0, 0.05, 4.0), Surface(base=(0.72, 0.72, 0.72), finish="matte")),
    ]
    prims = backdrop + list(model.prims)
    centre = model.centre
    extent = float(np.linalg.norm(model.upper - model.lower))
    distance = max(0.25, 0.75 * extent / math.tan(math.radians(REFERENCE_INTRINSICS.hfov_deg) / 2.0))
    renderer = Renderer(REFERENCE_INTRINSICS, Light(direction=(0.3, 1.0, 0.6), ambient=0.5))
    renderer.background = np.array([0.85, 0.86, 0.88], dtype=np.float32)
    elevation = math.radians(28.0)
    images = []
    for az in REFERENCE_AZIMUTHS:
        a = math.radians(az)
        horizontal = distance * math.cos(elevation)
        position = (
            centre[0] + horizontal * math.cos(a),
            centre[1] + distance * math.sin(elevation),
            centre[2] + horizontal * math.sin(a),
        )
        pose = CameraPose.looking_at(position, centre, -elevation)
        images.append(renderer.render(prims, pose).rgb)
    return images
