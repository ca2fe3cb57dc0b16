"""Save what the verifier looked at on each step, for the per-episode report pages.

The evaluator re-cuts the crop from the dataset image with the box the step reports (it has the dataset
anyway and the box is in the transcript), so ROS and in-process runs write the same files without shipping
images through action results. Files are small JPEG thumbnails of the crop region at camera resolution.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import numpy as np
from aiv_dataset.layout import PInVerifyDataset
from PIL import Image

from ..records.store import writing

THUMBNAIL_MAX_SIDE = 256


class CropWriter:
    def __init__(self, dataset: PInVerifyDataset, run_dir: Path) -> None:
        self.dataset = dataset
        self.run_dir = run_dir
        self._images: dict[tuple[str, str], Path | None] = {}

    def _image_path(self, episode_path: str, capture_tag: str) -> Path | None:
        key = (episode_path, capture_tag)
        if key not in self._images:
            episode = self.dataset.load_episode(episode_path)
            for view in (episode.meta.viewpoints or ()) + (episode.meta.captures or ()):
                if view.name and view.rgb:
                    self._images[(episode_path, view.name)] = episode.image_path(view)
            self._images.setdefault(key, None)
        return self._images.get(key)

    def write(
        self,
        episode_index: int,
        step: int,
        episode_path: str,
        capture_tag: str,
        box: tuple[int, int, int, int] | None,
    ) -> str | None:
        """Relative path of the saved crop, or None when the capture has no image."""
        source = self._image_path(episode_path, capture_tag) if capture_tag else None
        if source is None:
            return None
        with Image.open(source) as opened:
            image = np.asarray(opened.convert("RGB"))
        if box is not None:
            left, top, right, bottom = box
            image = image[top:bottom, left:right]
        if image.size == 0:
            return None
        picture = Image.fromarray(image)
        picture.thumbnail((THUMBNAIL_MAX_SIDE, THUMBNAIL_MAX_SIDE))
        relative = Path("crops") / f"ep_{episode_index:05d}" / f"step{step + 1}.jpg"
        target = self.run_dir / relative
        # A failure here is the run dir's (disk full, read-only), not the episode's: it must stop the run
        # rather than be recorded as a dataset problem and retried, so it is raised as RunDirWriteError.
        with writing(target):
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                picture.save(target, quality=85)
            except BaseException:
                with contextlib.suppress(OSError):  # a truncated JPEG is rewritten on resume anyway
                    target.unlink()
                raise
        return relative.as_posix()
