"""The benchmark's category-hint rule (aiv_eval.run.category_hint): only the trained agent is told the index's
query category, as its reference was (spec §7.1); the pipeline and the embedding agents predict or ignore it."""

from __future__ import annotations

import pytest
from aiv_dataset.index_records import PairRecord
from aiv_eval.run.category_hint import benchmark_category_hint
from aiv_eval.run.spec import EvalSpec


def neg_diff_pair() -> PairRecord:
    """A pair whose query category (ball) differs from the object in view (mug)."""
    return PairRecord(
        episode_path="val/s1/ep1",
        scene="s1",
        episode="ep1",
        meta_path="val/s1/ep1/meta.json",
        rgb_dir="val/s1/ep1/rgb",
        target_object_id="mugA",
        target_object_category="mug",
        query_object_id="ballB",
        query_object_category="ball",
        label=0,
        pair_type="neg_diff",
    )


@pytest.mark.parametrize(
    ("kind", "hint"), [("trained", "ball"), ("pipeline", ""), ("clip", ""), ("siglip", "")]
)
def test_only_the_trained_agent_gets_the_query_category(kind: str, hint: str) -> None:
    assert benchmark_category_hint({"agent.kind": kind}, neg_diff_pair()) == hint


def test_the_default_spec_is_the_pipeline_and_gets_no_hint() -> None:
    assert benchmark_category_hint(EvalSpec().agent_flat(), neg_diff_pair()) == ""
