"""What the ``detector`` node publishes for one frame: its boxes as ``aiv_interfaces/Detection2DArray``, as
``vision_msgs/Detection2DArray`` (when vision_msgs is installed) and drawn on the frame for a person watching.

Why apart from the node: these are pure conversions of the model's :class:`PhraseDetection` list, testable and
readable without the node's threads and lifecycle.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
from aiv_interfaces.msg import Detection2D, Detection2DArray
from PIL import Image as PilImage
from PIL import ImageDraw

from .detection.grounding_dino import PhraseDetection, grounding_query

try:  # optional: the interfaces most ROS perception stacks consume; not installed on every machine
    vision_msgs: Any = importlib.import_module("vision_msgs.msg")
except ImportError:
    vision_msgs = None


def detections_message(header: Any, found: list[PhraseDetection], query: str) -> Detection2DArray:
    """The project's Detection2DArray for one frame (its header), best score first, naming the caption run."""
    message = Detection2DArray(header=header, query=grounding_query(query))
    message.detections = [
        Detection2D(
            x_min=float(item.detection.box_xyxy[0]),
            y_min=float(item.detection.box_xyxy[1]),
            x_max=float(item.detection.box_xyxy[2]),
            y_max=float(item.detection.box_xyxy[3]),
            score=float(item.detection.score),
            label=item.phrase or query,
        )
        for item in found
    ]
    return message


def vision_detections_message(header: Any, found: list[PhraseDetection], query: str) -> Any:
    """The same boxes as vision_msgs/Detection2DArray (center + size, one hypothesis each)."""
    assert vision_msgs is not None
    message = vision_msgs.Detection2DArray(header=header)
    for item in found:
        x1, y1, x2, y2 = item.detection.box_xyxy
        detection = vision_msgs.Detection2D(header=header)
        detection.bbox.center.position.x = (x1 + x2) / 2.0
        detection.bbox.center.position.y = (y1 + y2) / 2.0
        detection.bbox.size_x = float(x2 - x1)
        detection.bbox.size_y = float(y2 - y1)
        hypothesis = vision_msgs.ObjectHypothesisWithPose()
        hypothesis.hypothesis.class_id = item.phrase or query
        hypothesis.hypothesis.score = float(item.detection.score)
        detection.results = [hypothesis]
        message.detections.append(detection)
    return message


def draw_detections(image: np.ndarray, found: list[PhraseDetection], query: str) -> np.ndarray:
    """The frame with every box (best in yellow, others in cyan) and its phrase and score."""
    picture = PilImage.fromarray(image).convert("RGB")
    draw = ImageDraw.Draw(picture)
    draw.text((6, 4), f"query: {query}  boxes: {len(found)}", fill=(255, 255, 255))
    for rank, item in enumerate(found):
        colour = (255, 220, 0) if rank == 0 else (0, 200, 255)
        box = tuple(float(v) for v in item.detection.box_xyxy)
        draw.rectangle(box, outline=colour, width=3 if rank == 0 else 1)
        draw.text((box[0] + 3, box[1] + 3), f"{item.phrase or query} {item.detection.score:.2f}", fill=colour)
    return np.asarray(picture)
