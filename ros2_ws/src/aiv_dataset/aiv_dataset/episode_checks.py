"""The checks an episode must pass before it is served: one definition for the validator and the simulator.

Loading meta.json (:func:`~.meta.parse_meta`) checks every field on its own: types, ranges, the camera block.
What it cannot see is how the episode's parts fit together: whether the image files its views name exist, are
images at all and have the size ``camera_intrinsics`` declares (a verifier reading a 90 x 160 frame with a
360 x 640 camera model misplaces every box), and whether the directory the episode lives in carries the
``scene_key`` / ``episode_id`` its results are filed under. Those checks live here and nowhere else:

* ``aiv-dataset validate`` collects every problem of every episode (:func:`episode_problems`), optionally
  decoding every pixel;
* the episode environment, which the simulator node and the in-process evaluation both play, calls
  :func:`check_episode` once when it loads an episode (header probes only: a few hundred bytes per image) and
  refuses the episode with the first problem, so a broken episode is never served, and never scored.
"""

from __future__ import annotations

from .errors import DatasetError
from .fields import Where
from .images import probe_image
from .layout import Episode

#: How thoroughly image files are checked: full decode, header only, or not at all.
IMAGE_CHECKS: tuple[str, ...] = ("decode", "header", "none")


def image_problems(episode: Episode, images: str = "header") -> tuple[list[DatasetError], int]:
    """Problems with the image files of an episode's navigable views (the ones an agent can be shown), and
    how many files were checked.

    Every navigable view's rgb frame and mask must exist below the dataset root, be a readable image
    (``images="decode"`` also decodes every pixel; ``"header"`` reads the header only) and, when meta.json has
    ``camera_intrinsics``, have exactly its width and height.
    """
    if images not in IMAGE_CHECKS:
        raise ValueError(f"images must be one of {IMAGE_CHECKS}, got {images!r}")
    if images == "none":
        return [], 0
    problems: list[DatasetError] = []
    checked = 0
    intrinsics = episode.meta.camera_intrinsics
    seen: set[str] = set()
    for view in (*(episode.meta.viewpoints or ()), *(episode.meta.captures or ())):
        if not view.navigable:
            continue
        for kind, relative in (("rgb", view.rgb), ("mask", view.mask_path)):
            if not relative or relative in seen:
                continue
            seen.add(relative)
            checked += 1
            try:
                path = episode.image_path(view, kind)
                width, height = probe_image(path, decode=images == "decode", field=f"{view.name}.{kind}")
            except DatasetError as error:
                problems.append(error)
                continue
            if intrinsics is not None and (width, height) != (intrinsics.width, intrinsics.height):
                problems.append(
                    DatasetError(
                        f"image is {width}x{height}, expected {intrinsics.width}x{intrinsics.height}"
                        " (camera_intrinsics of meta.json)",
                        path=path,
                        field=f"{view.name}.{kind}",
                    )
                )
    return problems, checked


def identity_problems(episode: Episode) -> list[DatasetError]:
    """The directory names ``<scene>/<episode>`` must match ``scene_key`` / ``episode_id`` in meta.json,
    since results are filed by them."""
    problems = []
    parts = episode.episode_path.split("/")
    where = Where.of(episode.meta.source)
    if len(parts) >= 2:
        if parts[-2] != episode.meta.scene_key:
            problems.append(
                where.at("scene_key").error(
                    f"{episode.meta.scene_key!r} differs from directory {parts[-2]!r}"
                )
            )
        if parts[-1] != episode.meta.episode_id:
            problems.append(
                where.at("episode_id").error(
                    f"{episode.meta.episode_id!r} differs from directory {parts[-1]!r}"
                )
            )
    return problems


def episode_problems(episode: Episode, images: str = "header") -> tuple[list[DatasetError], int]:
    """Every problem of a loaded episode (images first, then identity) and the number of images checked."""
    problems, checked = image_problems(episode, images)
    problems.extend(identity_problems(episode))
    return problems, checked


def check_episode(episode: Episode) -> None:
    """Refuse an episode that must not be served: raise its first problem (header probes of its images).

    The error keeps the first problem's file and field; when there are more, the reason says how many, so the
    person fixing the dataset knows to run ``aiv-dataset validate`` for the full list.
    """
    problems, _ = episode_problems(episode, images="header")
    if not problems:
        return
    first = problems[0]
    if len(problems) == 1:
        raise first
    raise DatasetError(
        f"{first.reason} (and {len(problems) - 1} more problem(s) in this episode; `aiv-dataset validate` "
        "lists them all)",
        path=first.path,
        line=first.line,
        field=first.field,
    )
