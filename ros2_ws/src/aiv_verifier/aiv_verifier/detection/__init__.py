"""Where the candidate object's box comes from: privileged ground truth, an external topic, or a model."""

from .base import BoxMode, Detector, crop_view, sanitize_detections

__all__ = ["BoxMode", "Detector", "crop_view", "sanitize_detections"]
