"""The ``record`` and ``replay`` subcommands this package adds to ``aiv-bag`` (entry-point group
``aiv_bags.commands``, so the ROS-free ``aiv_bags`` never imports rclpy or the verifier).

    aiv-bag record OUT [--storage mcap|sqlite3] [--topic ROLE=NAME ...] [--verifier-params FILE] [--ros-args ...]
    aiv-bag record --split-dir DIR ...        one bag per verification request, DIR/<episode key>
    aiv-bag replay BAG [--params-file FILE] [--set name=value ...] [--mode inprocess|ros]
                   [--verifier start|running]     (--mode ros: start a verifier node, or use a running one)

``replay`` exit status: 0 when every replayed step and verdict equals the recording, 1 when any differs (the
differences are listed per step), 2 on bad input (one line naming the bag, the topic and the problem).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .session_bag import SessionBagError

REPLAY_MODES = ("inprocess", "ros")


def _record(args: argparse.Namespace) -> int:
    from .recorder import run

    return run(args, args.ros_args or [])


def _replay(args: argparse.Namespace) -> int:
    from .replay import EXIT_BAD_INPUT, EXIT_DIFFERENT, EXIT_IDENTICAL, replay_bag

    params_file = Path(args.params_file) if args.params_file else None
    try:
        if args.mode == "ros":
            from .ros_replay import replay_bag_ros

            report = replay_bag_ros(
                Path(args.bag),
                params_file=params_file,
                sets=args.set,
                verifier=args.verifier,
                server_wait_s=args.server_wait,
                episode_timeout_s=args.episode_timeout,
            )
        else:
            report = replay_bag(Path(args.bag), params_file=params_file, sets=args.set)
    except SessionBagError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    for line in report.lines():
        print(line)
    return EXIT_IDENTICAL if report.identical else EXIT_DIFFERENT


def add_record_command(sub: Any) -> None:
    from .recorder import add_record_arguments

    parser = sub.add_parser("record", help="record a verification session (ROS 2) into a bag")
    add_record_arguments(parser)
    parser.add_argument("--ros-args", nargs=argparse.REMAINDER, help="ROS arguments (remappings, ...)")
    parser.set_defaults(func=_record)


def add_replay_command(sub: Any) -> None:
    parser = sub.add_parser(
        "replay", help="replay a recorded session open-loop through a verifier configuration and compare"
    )
    parser.add_argument("bag", help="session bag directory")
    parser.add_argument("--params-file", help="verifier params YAML (default: the one stored in the bag)")
    parser.add_argument(
        "--set", action="append", default=[], metavar="NAME=VALUE", help="override one verifier parameter"
    )
    parser.add_argument(
        "--mode",
        choices=REPLAY_MODES,
        default="inprocess",
        help="inprocess (no DDS), or ros: a replay node serves the recorded frames and moves to a verifier node",
    )
    parser.add_argument(
        "--verifier",
        choices=("start", "running"),
        default="start",
        help="--mode ros: start a verifier node with the replay's configuration (default), or use a running one",
    )
    parser.add_argument(
        "--server-wait",
        type=float,
        default=60.0,
        metavar="S",
        help="--mode ros: seconds to wait for the verifier",
    )
    parser.add_argument(
        "--episode-timeout",
        type=float,
        default=300.0,
        metavar="S",
        help="--mode ros: seconds per episode verdict",
    )
    parser.set_defaults(func=_replay)
