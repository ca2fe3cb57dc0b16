"""``aiv-bag``: object tours as rosbag2 files.

    aiv-bag export ROOT EPISODE_PATH OUT [--index FILE] [--storage mcap|sqlite3] [--compressed png|jpeg] ...
    aiv-bag import BAG ROOT [--sidecar FILE] [--split val] [--scene KEY] [--episode ID] ...

``export`` writes a dataset episode as a tour bag directory OUT (with its sidecar ``tour.yaml``); ``import``
turns a tour bag into an episode of the dataset at ROOT (``pin_capture/<split>/<scene>/<episode>/``), appends
its pairs to ``<split>/pv_index_tours.jsonl`` and adds the descriptions. Exit status: 0 done, 2 bad input or
usage (one line on stderr naming the bag, the topic and the problem; nothing is written).

``record`` and ``replay`` (verification sessions) come from the ``aiv_bags_ros`` package when it is installed,
through the :data:`COMMAND_PLUGINS` entry points; see ``aiv_bags_ros.commands`` for their exit statuses.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib.metadata import entry_points
from pathlib import Path

from aiv_dataset.errors import DatasetError

from .geometry import UP_AXES
from .tour import COMPRESSED_FORMATS, TourError, TourFrames, TourTopics
from .tour_bag import BAG_VERSIONS, CAMERA_CHAINS, OBJECT_TOPICS, STORAGES
from .tour_export import export_episode
from .tour_import import DEFAULT_FAR_MIN_M, DEFAULT_INDEX_NAME, ImportOptions, import_tour

EXIT_OK = 0
EXIT_BAD_INPUT = 2

#: Entry-point group of subcommands other packages add (``aiv_bags_ros``: ``record`` and ``replay``, which need
#: rclpy and the verifier; this package stays free of both). Each entry is ``add(subparsers) -> None``.
COMMAND_PLUGINS = "aiv_bags.commands"


def _add_topic_and_frame_options(parser: argparse.ArgumentParser, *, defaults: bool) -> None:
    hint = "" if defaults else " (default: sidecar, then the bag's record, then the export default)"
    parser.add_argument("--image-topic", help="sensor_msgs/Image or CompressedImage topic" + hint)
    parser.add_argument("--camera-info-topic", help="sensor_msgs/CameraInfo topic" + hint)
    parser.add_argument("--tf-topic", help="tf2_msgs/TFMessage topic of moving frames (default /tf)")
    parser.add_argument(
        "--tf-static-topic", help="tf2_msgs/TFMessage topic of fixed frames (default /tf_static)"
    )
    parser.add_argument(
        "--detections-topic",
        help="aiv_interfaces/Detection2DArray topic of the object's boxes (default /detections"
        + ("" if defaults else ", when the bag has it")
        + ")",
    )
    parser.add_argument("--fixed-frame", help="world frame the poses are in (default map)")
    parser.add_argument("--object-frame", help="tf frame at the object's centre (default object)")
    parser.add_argument("--camera-frame", help="optical frame of the images (default camera_optical)")
    parser.add_argument("--up-axis", choices=UP_AXES, help="up axis of the fixed frame (default z, REP-103)")


def _topics(args: argparse.Namespace) -> TourTopics:
    base = TourTopics()
    return TourTopics(
        image=args.image_topic,
        camera_info=args.camera_info_topic,
        tf=args.tf_topic or base.tf,
        tf_static=args.tf_static_topic or base.tf_static,
        detections=args.detections_topic,
    )


def _frame_overrides(args: argparse.Namespace) -> dict[str, str]:
    given = {
        "fixed": args.fixed_frame,
        "object": args.object_frame,
        "camera": args.camera_frame,
        "up_axis": args.up_axis,
    }
    return {k: v for k, v in given.items() if v}


def _cmd_export(args: argparse.Namespace) -> int:
    frames = TourFrames(**_frame_overrides(args))
    result = export_episode(
        Path(args.root),
        args.episode_path,
        Path(args.out),
        index=Path(args.index) if args.index else None,
        storage=args.storage,
        version=args.bag_version,
        compression=args.compressed,
        camera_chain=args.camera_chain,
        object_topic=args.object_on,
        frames=frames,
        topics=_topics(args),
        boxes=not args.no_boxes,
    )
    for line in result.lines():
        print(line)
    return EXIT_OK


def _cmd_import(args: argparse.Namespace) -> int:
    if "/" in args.index or "\\" in args.index:
        raise TourError(f"--index {args.index!r} must be a file name (it is written to ROOT/SPLIT/)")
    options = ImportOptions(
        root=Path(args.root),
        split=args.split,
        scene=args.scene,
        episode=args.episode,
        index_name=args.index,
        sidecar=Path(args.sidecar) if args.sidecar else None,
        topics=_topics(args),
        frames=_frame_overrides(args),
        object_position=tuple(args.object_position) if args.object_position else None,
        far_min_m=args.far_min,
    )
    result = import_tour(Path(args.bag), options)
    for line in result.lines:
        print(line)
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="aiv-bag", description=(__doc__ or "").split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    export = sub.add_parser("export", help="write a dataset episode as a tour bag (+ tour.yaml sidecar)")
    export.add_argument("root", help="dataset root (pv_dataset/)")
    export.add_argument(
        "episode_path", help="episode directory relative to the root, e.g. pin_capture/val/S/0"
    )
    export.add_argument("out", help="bag directory to create (must not exist)")
    export.add_argument("--index", help="pair index whose pairs of this episode go into the sidecar (labels)")
    export.add_argument(
        "--storage", choices=list(STORAGES), default="mcap", help="storage plugin (default mcap)"
    )
    export.add_argument(
        "--bag-version", type=int, choices=BAG_VERSIONS, default=9, help="rosbag2 metadata version"
    )
    export.add_argument("--compressed", choices=COMPRESSED_FORMATS, help="write sensor_msgs/CompressedImage")
    export.add_argument(
        "--camera-chain",
        choices=CAMERA_CHAINS,
        default="direct",
        help="direct: map->camera per view on /tf; base: map->base_link on /tf + static camera mount",
    )
    export.add_argument(
        "--object-on", choices=OBJECT_TOPICS, default="tf_static", help="where the object frame goes"
    )
    export.add_argument(
        "--no-boxes", action="store_true", help="leave out the ground-truth boxes (no box topic)"
    )
    _add_topic_and_frame_options(export, defaults=True)
    export.set_defaults(func=_cmd_export)

    imp = sub.add_parser("import", help="turn a tour bag into an episode of a PInVerify dataset")
    imp.add_argument("bag", help="rosbag2 directory (mcap or sqlite3)")
    imp.add_argument("root", help="dataset root to add the episode to (created if missing)")
    imp.add_argument("--sidecar", help="sidecar file (default: BAG/tour.yaml, else BAG.tour.yaml)")
    imp.add_argument("--split", help="split (default: sidecar, else val)")
    imp.add_argument("--scene", help="scene key (default: sidecar, else the bag directory name)")
    imp.add_argument("--episode", help="episode id (default: sidecar, else 0)")
    imp.add_argument(
        "--index", default=DEFAULT_INDEX_NAME, help=f"index file name (default {DEFAULT_INDEX_NAME})"
    )
    imp.add_argument(
        "--object-position",
        type=float,
        nargs=3,
        metavar=("X", "Y", "Z"),
        help="object centre in the fixed frame, instead of its tf frame",
    )
    imp.add_argument(
        "--far-min",
        type=float,
        default=DEFAULT_FAR_MIN_M,
        help=f"horizontal distance (m) from which a view is far (default {DEFAULT_FAR_MIN_M})",
    )
    _add_topic_and_frame_options(imp, defaults=False)
    imp.set_defaults(func=_cmd_import)
    for plugin in sorted(entry_points(group=COMMAND_PLUGINS), key=lambda entry: entry.name):
        plugin.load()(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``aiv-bag`` console script; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except (TourError, DatasetError) as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT


if __name__ == "__main__":
    sys.exit(main())
