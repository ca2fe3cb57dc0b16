"""Helpers of the tour-bag tests: benchmark-like episodes, re-framed tours, edited bags, environment traces."""

from __future__ import annotations

import dataclasses
import json
import math
import random
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from aiv_bags.geometry import Transform, axis_angle_matrix
from aiv_bags.tour import Tour
from aiv_bags.tour_bag import typestore
from aiv_dataset import PInVerifyDataset, parse_pair_record
from aiv_dataset.fields import Where
from aiv_dataset.vocabulary import DIRECTIONS
from aiv_offline_sim.environment import Action, PInVerifyEnv
from rosbags.rosbag2 import Reader, Writer
from support.tiny_dataset import RAW_SECTORS, EpisodeHandle, EpisodeSpec, TinyDataset, View

# -- episodes ---------------------------------------------------------------------------------------------


def jittered_views(
    seed: int,
    *,
    traps: Iterable[int] = (),
    unreachable: Iterable[int] = (),
    near_only: Iterable[int] = (),
    far_only: Iterable[int] = (),
    max_jitter_deg: float = 10.0,
) -> list[View]:
    """Far + near views per active sector like the capture pipeline's, each at a random azimuth within
    ``max_jitter_deg`` of its 30-degree window's centre and a random distance inside its band."""
    rng = random.Random(seed)
    traps, unreachable = set(traps), set(unreachable)
    near_only, far_only = set(near_only), set(far_only)
    views = []
    for s in RAW_SECTORS:
        for kind, (lo, hi) in (("far", (1.4, 1.7)), ("near", (0.9, 1.2))):
            if (kind == "far" and s in near_only) or (kind == "near" and s in far_only):
                continue
            nav = s not in unreachable
            views.append(
                View(
                    s,
                    kind,
                    navigable=nav,
                    visible=nav and s not in traps,
                    angle_deg=30.0 * s + 15.0 + rng.uniform(-max_jitter_deg, max_jitter_deg),
                    radius=rng.uniform(lo + 0.02, hi - 0.02),
                )
            )
    return views


def benchmark_like_dataset(root: Path) -> tuple[TinyDataset, list[EpisodeHandle], Path]:
    """Four episodes of varied layouts (traps, unreachable sectors, a sector with only a near view, one whose
    lowest sector is not 0) and a pair index with positive and negative pairs."""
    ds = TinyDataset(root)
    layouts = [
        dict(traps={4}),
        dict(traps={2, 8}, unreachable={6}),
        dict(unreachable={0}, near_only={4}, traps={10}),
        dict(unreachable={0, 2}, far_only={8}),
    ]
    episodes = []
    for n, layout in enumerate(layouts):
        episodes.append(
            ds.add_episode(
                EpisodeSpec(
                    scene=f"{n:05d}-tourscene{n}",
                    episode=str(n),
                    object_id=f"mug_{n}",
                    category="mug",
                    views=jittered_views(100 + n, **layout),  # type: ignore[arg-type]
                )
            )
        )
    ds.add_object("keys_9", "keys")
    pairs = []
    for ep in episodes:
        pairs.append(ds.pair(ep))
        pairs.append(ds.pair(ep, "mug_0" if ep.object_id != "mug_0" else "mug_1"))
        pairs.append(ds.pair(ep, "keys_9", "keys"))
    ds.write_descriptions()
    index = ds.write_index("pv_index_all.jsonl", pairs)
    return ds, episodes, index


# -- re-framing a tour ------------------------------------------------------------------------------------


def reframe(
    tour: Tour,
    yaw_rad: float,
    offset: Sequence[float] = (0.0, 0.0, 0.0),
    *,
    noise_seed: int | None = None,
    noise_deg: float = 3.0,
    noise_m: float = 0.03,
) -> Tour:
    """The same tour in another map frame: every pose and the object turned by ``yaw_rad`` about the up axis
    and shifted by ``offset``; with ``noise_seed``, each camera pose then gets up to +-``noise_m`` per axis and
    a rotation of up to ``noise_deg`` about a random axis."""
    up = (0.0, 0.0, 1.0) if tour.frames.up_axis == "z" else (0.0, 1.0, 0.0)
    frame = Transform.from_matrix(axis_angle_matrix(up, yaw_rad), offset)
    rng = np.random.default_rng(noise_seed) if noise_seed is not None else None
    views = []
    for view in tour.views:
        pose = frame.compose(view.pose)
        if rng is not None:
            axis = rng.normal(size=3)
            wobble = axis_angle_matrix(axis, math.radians(rng.uniform(-noise_deg, noise_deg)))
            shift = np.asarray(pose.translation) + rng.uniform(-noise_m, noise_m, size=3)
            pose = Transform.from_matrix(pose.matrix @ wobble, shift)
        views.append(dataclasses.replace(view, pose=pose))  # boxes stay: they are in image pixels
    moved = frame.compose(Transform(tour.object_position)).translation
    return dataclasses.replace(tour, views=tuple(views), object_position=moved)


# -- editing bags -----------------------------------------------------------------------------------------

Edit = Callable[[str, Any, int], Any]


def rewrite_bag(
    src: Path,
    dst: Path,
    *,
    drop: Iterable[str] = (),
    edit: Edit | None = None,
    rename: dict[str, str] | None = None,
    storage_plugin: Any = None,
) -> None:
    """Copy a bag message by message, dropping topics, renaming them, or editing decoded messages
    (``edit(topic, message, n)`` returns the message to write, or None to leave it out)."""
    store = typestore()
    dropped, renames = set(drop), rename or {}
    reader = Reader(src)
    reader.open()
    kwargs = {} if storage_plugin is None else {"storage_plugin": storage_plugin}
    try:
        with Writer(dst, version=9, **kwargs) as writer:
            connections = {}
            counts: dict[str, int] = {}
            for connection, stamp, raw in reader.messages():
                topic = connection.topic
                if topic in dropped:
                    continue
                message = store.deserialize_cdr(raw, connection.msgtype)
                counts[topic] = counts.get(topic, 0) + 1
                if edit is not None:
                    message = edit(topic, message, counts[topic])
                    if message is None:
                        continue
                out_topic = renames.get(topic, topic)
                if out_topic not in connections:
                    connections[out_topic] = writer.add_connection(
                        out_topic, connection.msgtype, typestore=store
                    )
                writer.write(
                    connections[out_topic], stamp, bytes(store.serialize_cdr(message, connection.msgtype))
                )
    finally:
        reader.close()
    sidecar = src / "tour.yaml"
    if sidecar.is_file():
        (dst / "tour.yaml").write_text(sidecar.read_text())


# -- environment traces -----------------------------------------------------------------------------------


def action_scripts(long_scripts: int = 12, *, pairs: bool = True) -> list[list[Action]]:
    """Every single move then Yes, every two moves then No (with ``pairs``), and deterministic long scripts
    of six moves that reach the budget (forced stop)."""
    scripts = [[Action.move(d), Action.yes()] for d in DIRECTIONS]
    if pairs:
        scripts += [[Action.move(a), Action.move(b), Action.no()] for a in DIRECTIONS for b in DIRECTIONS]
    rng = random.Random(7)
    scripts += [[Action.move(rng.choice(DIRECTIONS)) for _ in range(6)] for _ in range(long_scripts)]
    return scripts


def _identities(root: Path, episode_path: str) -> dict[str, str]:
    """rgb file name -> identity of the physical view: the dataset tag for an original episode, the tag the
    tour carried (export writes it to the sidecar) for an imported one."""
    meta = json.loads((root / episode_path / "meta.json").read_text())
    out = {}
    for record in meta.get("viewpoints") or meta.get("captures") or []:
        if record.get("rgb"):
            identity = (record.get("tour_view") or {}).get("label") or record["tag"]
            out[Path(record["rgb"]).name] = identity
    return out


def env_traces(
    root: Path, index_records: Sequence[dict[str, Any]], scripts: Sequence[Sequence[Action]], seeds: int = 6
) -> list[Any]:
    """For every record (played under ``seeds`` different start seeds) and script: the sector map, the start
    view and every transition, with views named by their physical identity."""
    records = [parse_pair_record(r, Where.of("test")) for r in index_records for _ in range(seeds)]
    env = PInVerifyEnv(records, PInVerifyDataset(root), seed_policy="seed_plus_index")
    names = {r.episode_path: _identities(root, r.episode_path) for r in records}
    traces = []
    for i, record in enumerate(records):
        ident = names[record.episode_path]
        for script in scripts:
            obs = env.reset(i)
            smap = env.sector_map
            sector_map = {
                v: {kind: ident[Path(smap.captures[idx].rgb or "").name] for kind, idx in slots.items()}
                for v, slots in smap.slots.items()
            }
            start = (obs.current_sector, ident[Path(obs.rgb_path or "").name])
            steps = []
            for action in script:
                obs, _, done, info = env.step(action)
                steps.append(
                    (
                        info.outcome.value,
                        info.from_sector,
                        info.to_sector,
                        info.trap_view,
                        obs.current_sector,
                        ident[Path(obs.rgb_path or "").name],
                        done,
                    )
                )
                if done:
                    break
            traces.append((record.query_object_id, record.label, sector_map, start, steps))
    return traces


def index_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
