"""The oracle with visibility measured on the view itself (a live render at any pose, e.g. the robot stand-in).

With ``PrivilegedViewInfo.visible_attributes`` set, the oracle judges from that set and the view's own
mask-over-threshold flag and never looks the capture up (``capture_tag`` is then ``live`` off the capture poses);
without it (the offline simulator, the in-process evaluation) it looks the capture up as before.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from aiv_dataset import PInVerifyDataset
from aiv_verifier.core.types import Attribute, Decision
from aiv_verifier.verification.base import PrivilegedViewInfo, ViewInput
from aiv_verifier.verification.oracle import OracleVerifier

IMAGE = np.zeros((8, 8, 3), dtype=np.uint8)


def _objects(root: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(root.glob("privileged_gt/*/*.json"))]


def _live_view(
    root: Path, query_id: str, target: dict, visible: frozenset[str] | None, shown: bool = True
) -> ViewInput:
    episode_path = next(iter(target["captures"]))
    descriptions = PInVerifyDataset(root).load_descriptions().descriptions_for(query_id)
    return ViewInput(
        IMAGE,
        IMAGE,
        None,
        1.0,
        "",
        descriptions,
        "k",
        0,
        PrivilegedViewInfo(episode_path, "live", target["object_id"], shown, visible),
    )


def _items(obj: dict) -> list[Attribute]:
    return [Attribute(a["name"], a["type"], 2, a["phrase"]) for a in obj["attributes"]]


def test_live_visibility_answers_at_a_pose_no_capture_was_taken_from(micro_root: Path) -> None:
    oracle = OracleVerifier.for_dataset(micro_root)
    obj = _objects(micro_root)[0]
    items = _items(obj)
    shown_names = frozenset(item.name for item in items[::2])  # every other attribute in view
    answers = oracle.verify(_live_view(micro_root, obj["object_id"], obj, shown_names), items)
    for item, answer in zip(items, answers, strict=True):
        expected = Decision.YES if item.name in shown_names else Decision.UNSURE
        assert answer.answer is expected, (item, answer)

    # The same view without measured visibility: "live" is no capture of the episode, so nothing to judge.
    looked_up = oracle.verify(_live_view(micro_root, obj["object_id"], obj, None), items)
    assert {a.answer for a in looked_up} == {Decision.UNSURE}
    assert "no ground truth for capture live" in looked_up[0].reason


def test_live_visibility_uses_the_view_s_own_threshold_flag(micro_root: Path) -> None:
    oracle = OracleVerifier.for_dataset(micro_root)
    obj = _objects(micro_root)[0]
    items = _items(obj)
    every = frozenset(item.name for item in items)
    hidden = oracle.verify(_live_view(micro_root, obj["object_id"], obj, every, shown=False), items)
    assert {a.answer for a in hidden} == {Decision.UNSURE}
    assert "not clearly visible" in hidden[0].reason
    nothing = oracle.verify(_live_view(micro_root, obj["object_id"], obj, frozenset()), items)
    assert {a.answer for a in nothing} == {Decision.UNSURE}  # in view, but no attribute region big enough


def test_live_visibility_says_no_to_another_object(micro_root: Path) -> None:
    oracle = OracleVerifier.for_dataset(micro_root)
    objects = _objects(micro_root)
    target = objects[0]
    other_category = next((o for o in objects if o["object_category"] != target["object_category"]), None)
    assert other_category is not None, "the micro dataset has more than one category"
    every = frozenset(a["name"] for a in target["attributes"])
    answers = oracle.verify(
        _live_view(micro_root, other_category["object_id"], target, every), _items(other_category)
    )
    assert {a.answer for a in answers} == {Decision.NO}
    assert f"this is a {target['object_category']}" in answers[0].reason

    # Same category, another instance: the attributes the two differ in (and that are in view) are No.
    same = [o for o in objects if o["object_category"] == target["object_category"] and o is not target]
    for query in same:
        values = {a["name"]: a["value"] for a in target["attributes"]}
        differing = [
            a["name"] for a in query["attributes"] if values.get(a["name"], a["value"]) != a["value"]
        ]
        if not differing:
            continue
        items = [i for i in _items(query) if i.name in differing]
        answers = oracle.verify(_live_view(micro_root, query["object_id"], target, every), items)
        assert {a.answer for a in answers} == {Decision.NO}, answers
        break
