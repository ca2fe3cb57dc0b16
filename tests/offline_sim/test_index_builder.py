"""The evaluation-index pipeline of spec §2.4: raw index, distractor map, 1:1:1 pairs, balanced sampling,
stratified subsets — and its determinism."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest
from aiv_dataset import (
    EpisodeEntry,
    PInVerifyDataset,
    load_distractor_map,
    read_pair_index,
)
from aiv_dataset.index_builder import (
    build_distractor_map,
    build_index,
    make_pairs,
    sample_balanced,
    scan_raw_index,
    stratified_subsets,
)
from support.tiny_dataset import RAW_SECTORS, EpisodeSpec, build_small_benchmark, ring


def entry(object_id: str, category: str, n: int = 0) -> EpisodeEntry:
    path = f"pin_capture/val/{object_id}-scene/{n}"
    return EpisodeEntry(
        episode_path=path,
        scene=f"{object_id}-scene",
        episode=str(n),
        meta_path=f"{path}/meta.json",
        rgb_dir=f"{path}/rgb",
        target_object_id=object_id,
        target_object_category=category,
        valid_start_sectors=(0,),
        navigable_sectors=(0,),
        n_navigable=1,
        n_mask_visible=1,
    )


def population(sizes: dict[str, tuple[int, int]]) -> list[EpisodeEntry]:
    """``{category: (objects, episodes per object)}`` -> entries, interleaved like a scene-ordered scan."""
    out = []
    for category, (objects, per_object) in sizes.items():
        for o in range(objects):
            out.extend(entry(f"{category}{o}", category, e) for e in range(per_object))
    return out


# --- raw index ---------------------------------------------------------------------------------------------


def test_raw_index_records_sectors_and_skips_episodes_without_valid_start(tiny):
    tiny.add_episode(EpisodeSpec(episode="0", views=ring(unreachable={10}, far_traps={2}, traps={4})))
    tiny.add_episode(EpisodeSpec(episode="1", views=ring(traps=set(RAW_SECTORS))))
    scan = scan_raw_index(PInVerifyDataset(tiny.root), "val")
    assert scan.scanned == 2 and scan.skipped_no_valid_start == ["pin_capture/val/00001-aaaaaaaaaaa/1"]
    (only,) = scan.entries
    assert only.valid_start_sectors == (0, 2, 6, 8)  # sector 2: only its near view is visible
    assert only.navigable_sectors == (0, 2, 4, 6, 8)
    assert (only.n_navigable, only.n_mask_visible) == (5, 4)
    assert only.to_dict() == {
        "episode_path": "pin_capture/val/00001-aaaaaaaaaaa/0",
        "scene": "00001-aaaaaaaaaaa",
        "episode": "0",
        "meta_path": "pin_capture/val/00001-aaaaaaaaaaa/0/meta.json",
        "rgb_dir": "pin_capture/val/00001-aaaaaaaaaaa/0/rgb",
        "depth_dir": "pin_capture/val/00001-aaaaaaaaaaa/0/depth",
        "target_object_id": "mug_a",
        "target_object_category": "mug",
        "valid_start_sectors": [0, 2, 6, 8],
        "navigable_sectors": [0, 2, 4, 6, 8],
        "n_navigable": 5,
        "n_mask_visible": 4,
    }


# --- distractor map ----------------------------------------------------------------------------------------


def test_distractor_map_limits():
    entries = population({"mug": (15, 1), "bag": (3, 2), "keys": (1, 1), "hat": (2, 1)})
    mapping = build_distractor_map(entries, seed=42)
    assert set(mapping) == {e.target_object_id for e in entries}
    for target, item in mapping.items():
        ids = [d.object_id for d in item.distractors]
        assert target not in ids and len(ids) == len(set(ids))
        per_category = Counter(d.object_category for d in item.distractors)
        same = per_category.pop(item.object_category, 0)
        assert same == {"mug": 10, "bag": 2, "keys": 0, "hat": 1}[item.object_category]
        expected_other = {c: min(2, n) for c, n in {"mug": 15, "bag": 3, "keys": 1, "hat": 2}.items()}
        del expected_other[item.object_category]
        assert per_category == expected_other


def test_distractor_map_follows_the_reference_draw_sequence():
    # Re-derive the map with the reference procedure (global RNG, same call order) and compare.
    entries = population({"mug": (13, 1), "bag": (4, 1), "keys": (2, 1)})
    random.seed(7)
    objects = {e.target_object_id: e.target_object_category for e in entries}
    by_cat: dict[str, list[str]] = {}
    for oid, cat in objects.items():
        by_cat.setdefault(cat, []).append(oid)
    expected = {}
    for oid, cat in objects.items():
        same = [o for o in by_cat[cat] if o != oid]
        chosen = random.sample(same, 10) if len(same) > 10 else same
        items = [(o, cat) for o in chosen]
        for other in sorted(by_cat):
            if other != cat:
                items += [(o, other) for o in random.sample(by_cat[other], min(2, len(by_cat[other])))]
        expected[oid] = items
    mapping = build_distractor_map(entries, seed=7)
    assert {
        k: [(d.object_id, d.object_category) for d in v.distractors] for k, v in mapping.items()
    } == expected


# --- pairs -------------------------------------------------------------------------------------------------


def test_pairs_are_one_to_one_to_one_and_typed_correctly():
    entries = population({"mug": (3, 2), "bag": (2, 2), "keys": (1, 1)})
    mapping = build_distractor_map(entries)
    result = make_pairs(entries, mapping)
    counts = Counter(p.pair_type for p in result.pairs)
    assert counts == {"positive": 10, "neg_same": 10, "neg_diff": 10}  # keys0 has no same-category distractor
    assert result.skipped == {"no_neg_same": ["pin_capture/val/keys0-scene/0"]}
    for pair in result.pairs:
        same_id = pair.query_object_id == pair.target_object_id
        same_cat = pair.query_object_category == pair.target_object_category
        assert {"positive": (1, True, True), "neg_same": (0, False, True), "neg_diff": (0, False, False)}[
            pair.pair_type
        ] == (pair.label, same_id, same_cat)
    by_episode = Counter(p.episode_path for p in result.pairs)
    assert set(by_episode.values()) == {3}
    assert [p.pair_type for p in result.pairs[:6]] != ["positive", "neg_same", "neg_diff"] * 2  # shuffled


def test_pairing_follows_the_reference_draw_sequence():
    entries = population({"mug": (3, 2), "bag": (2, 1), "hat": (2, 1)})
    mapping = build_distractor_map(entries)
    random.seed(42)
    expected = []
    for e in entries:
        item = mapping[e.target_object_id]
        same = [d for d in item.distractors if d.object_category == e.target_object_category]
        other = [d for d in item.distractors if d.object_category != e.target_object_category]
        expected.append((e.episode_path, e.target_object_id, "positive"))
        expected.append((e.episode_path, random.choice(same).object_id, "neg_same"))
        expected.append((e.episode_path, random.choice(other).object_id, "neg_diff"))
    random.shuffle(expected)
    pairs = make_pairs(entries, mapping, seed=42).pairs
    assert [(p.episode_path, p.query_object_id, p.pair_type) for p in pairs] == expected


def test_targets_missing_from_the_map_are_skipped():
    entries = population({"mug": (2, 1), "bag": (2, 1)})
    mapping = build_distractor_map(entries[:3])
    result = make_pairs(entries, mapping)
    assert result.skipped["no_distractors"] == [entries[3].episode_path]


# --- balanced sampling -------------------------------------------------------------------------------------


def test_balanced_sampling_quota_remainder_and_object_coverage():
    entries = population({"mug": (3, 5), "keys": (2, 2), "bag": (4, 3)})  # 15, 4, 12 episodes
    sampled = sample_balanced(entries, 10, seed=42)
    assert len(sampled) == len({id(e) for e in sampled}) == 10
    per_category = Counter(e.target_object_category for e in sampled)
    assert per_category == {"keys": 3, "bag": 3, "mug": 4}  # floor(10/3) = 3, remainder to the largest
    objects = {
        cat: {e.target_object_id for e in sampled if e.target_object_category == cat} for cat in per_category
    }
    assert len(objects["keys"]) == 2 and len(objects["mug"]) == 3  # every object first
    assert len(objects["bag"]) == 3  # one episode each of three different objects
    assert sample_balanced(entries, 10, seed=42) == sampled
    assert sample_balanced(entries, 10, seed=1) != sampled


def test_balanced_sampling_follows_the_reference_draw_sequence():
    entries = population({"mug": (3, 5), "keys": (2, 2), "bag": (4, 3), "hat": (1, 6)})
    random.seed(42)
    by_cat: dict[str, dict[str, list[EpisodeEntry]]] = {}
    for e in entries:
        by_cat.setdefault(e.target_object_category, {}).setdefault(e.target_object_id, []).append(e)
    base, rem = divmod(11, len(by_cat))
    cats = sorted(by_cat, key=lambda c: sum(len(v) for v in by_cat[c].values()))
    expected = []
    for i, cat in enumerate(cats):
        quota = base + (1 if i >= len(cats) - rem else 0)
        ids = list(by_cat[cat])
        random.shuffle(ids)
        chosen = []
        for oid in ids:
            if len(chosen) >= quota:
                break
            chosen.append(random.choice(by_cat[cat][oid]))
        if len(chosen) < quota:
            pool = [e for oid in ids for e in by_cat[cat][oid] if all(e is not c for c in chosen)]
            random.shuffle(pool)
            chosen.extend(pool[: quota - len(chosen)])
        expected.extend(chosen[:quota])
    random.shuffle(expected)
    assert [id(e) for e in sample_balanced(entries, 11, seed=42)] == [id(e) for e in expected]


def test_balanced_sampling_small_categories_and_no_op():
    entries = population({"mug": (2, 10), "keys": (1, 1)})
    sampled = sample_balanced(entries, 8, seed=42)
    assert Counter(e.target_object_category for e in sampled) == {"keys": 1, "mug": 4}
    assert sample_balanced(entries, 100) == entries
    with pytest.raises(ValueError):
        sample_balanced(entries, 0)


# --- subsets -----------------------------------------------------------------------------------------------


def test_stratified_subsets_keep_pair_type_shares():
    entries = population({"mug": (5, 2), "bag": (2, 1)})
    pairs = make_pairs(entries, build_distractor_map(entries)).pairs
    assert len(pairs) == 36
    subsets = stratified_subsets(pairs, (5, 10, 29, 36, 50), seed=42)
    assert sorted(subsets) == [5, 10, 29]  # sizes >= the full set are skipped
    shares = {n: Counter(p.pair_type for p in s) for n, s in subsets.items()}
    assert shares[5] == {"neg_diff": 2, "neg_same": 2, "positive": 1}  # round(5/3) each, rest to the last
    assert shares[10] == {"neg_diff": 3, "neg_same": 3, "positive": 4}
    assert shares[29] == {"neg_diff": 10, "neg_same": 10, "positive": 9}
    for subset in subsets.values():
        assert len({p.key for p in subset}) == len(subset)
        assert all(p in pairs for p in subset)
    assert stratified_subsets(pairs, (5, 10, 29), seed=42) == subsets


# --- the whole pipeline on disk ----------------------------------------------------------------------------


def _file_bytes(directory):
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def test_build_index_writes_the_layout_deterministically(tmp_path):
    ds = build_small_benchmark(tmp_path / "root", objects_per_category=2, episodes_per_object=9)
    dataset = PInVerifyDataset(ds.root)
    first = build_index(dataset, "val", tmp_path / "a", subset_sizes=(50, 100, 1000))
    second = build_index(dataset, "val", tmp_path / "b", subset_sizes=(50, 100, 1000))
    other_seed = build_index(dataset, "val", tmp_path / "c", seed=7, subset_sizes=(50, 100, 1000))
    assert _file_bytes(tmp_path / "a") == _file_bytes(tmp_path / "b")
    assert (tmp_path / "a" / "pv_index_all.jsonl").read_bytes() != (
        tmp_path / "c" / "pv_index_all.jsonl"
    ).read_bytes()
    assert sorted(first.files) == ["distractors", "index", "subset_100", "subset_50"]
    assert first.pair_counts == {"positive": 54, "neg_same": 54, "neg_diff": 54}
    assert second.episodes_indexed == 54 and other_seed.pair_counts == first.pair_counts
    pairs = read_pair_index(tmp_path / "a" / "pv_index_all.jsonl")  # everything written re-validates
    assert len(pairs) == 162
    assert Counter(p.pair_type for p in read_pair_index(tmp_path / "a" / "pv_index_50.jsonl")) == {
        "neg_diff": 17,
        "neg_same": 17,
        "positive": 16,
    }
    mapping = load_distractor_map(tmp_path / "a" / "object_goal_distractors_map.json")
    assert set(mapping) == {f"{c}_{o}" for c in ("mug", "keys", "laptop") for o in (0, 1)}
    line = json.loads((tmp_path / "a" / "pv_index_all.jsonl").read_text().splitlines()[0])
    assert list(line)[-4:] == ["query_object_id", "query_object_category", "label", "pair_type"]


def test_build_index_with_max_episodes_archives_the_full_set(tmp_path):
    ds = build_small_benchmark(tmp_path / "root", objects_per_category=2, episodes_per_object=3)
    result = build_index(PInVerifyDataset(ds.root), "val", max_episodes=7, subset_sizes=(10,))
    out = ds.root / "val"
    assert result.out_dir == out
    archive = read_pair_index(out / "pv_index_all_54.jsonl")  # 18 episodes x 3 pairs, unsampled
    sampled = read_pair_index(out / "pv_index_all.jsonl")
    assert len(archive) == 54 and len(sampled) == 21
    # floor(7/3) = 2 per category; the one left over goes to the last of the (equal-sized) categories.
    positives = Counter(p.target_object_category for p in sampled if p.pair_type == "positive")
    assert positives == {"mug": 2, "keys": 2, "laptop": 3}
    assert len(read_pair_index(out / "pv_index_10.jsonl")) == 10


def test_build_index_reuses_a_given_distractor_map(tmp_path):
    ds = build_small_benchmark(tmp_path / "root", objects_per_category=2, episodes_per_object=1)
    dataset = PInVerifyDataset(ds.root)
    mapping = build_distractor_map(scan_raw_index(dataset, "val").entries, seed=3)
    result = build_index(dataset, "val", tmp_path / "out", distractor_map=mapping, subset_sizes=())
    assert (
        "distractors" not in result.files
        and not (tmp_path / "out" / "object_goal_distractors_map.json").exists()
    )
    for pair in read_pair_index(tmp_path / "out" / "pv_index_all.jsonl"):
        if pair.pair_type != "positive":
            assert pair.query_object_id in {d.object_id for d in mapping[pair.target_object_id].distractors}
