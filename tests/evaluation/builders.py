"""Small, explicit record builders for the evaluation tests (no randomness)."""

from __future__ import annotations

from collections.abc import Sequence

from aiv_eval import (
    AttributeObservation,
    EpisodeRecord,
    RunConfig,
    TranscriptStep,
    build_episode_record,
    build_infra_failure_record,
)

RUN_ID = "run-test"
CONFIG_INFO = {
    "agent_type": "mllm",
    "nbv_type": "llm",
    "fusion_type": "attr_majority",
    "bbox_mode": "dino",
    "max_steps": 6,
    "query_mode": "attribute",
}


def run_config(**overrides: object) -> RunConfig:
    kwargs: dict[str, object] = {
        "config": {
            "method": {"nbv": {"type": "llm"}, "fusion": {"type": "attr_majority"}},
            "env": {"max_steps": 6},
        },
        "index_file": "val/pv_index_all.jsonl",
        "slice": (0, None),
        "seed": 42,
        "code_version": "abc123",
        "config_info": CONFIG_INFO,
        "run_id": RUN_ID,
        "name": "test-run",
    }
    kwargs.update(overrides)
    return RunConfig(**kwargs)  # type: ignore[arg-type]


def index_entry(
    *,
    scene: str = "s1",
    episode: str = "ep1",
    target: str = "mugA",
    target_category: str = "mug",
    query: str | None = None,
    query_category: str | None = None,
    pair_type: str = "positive",
) -> dict[str, object]:
    query = target if query is None else query
    return {
        "scene": scene,
        "episode": episode,
        "target_object_id": target,
        "target_object_category": target_category,
        "query_object_id": query,
        "query_object_category": query_category or target_category,
        "label": 1 if pair_type == "positive" else 0,
        "pair_type": pair_type,
    }


def attribute(name: str, observed: str, state: str, matched: float = 0.0, contradicted: float = 0.0):
    return AttributeObservation(
        name=name,
        expected=f"{name} evidence",
        observed=observed,
        state=state,
        reconciled_state=state,
        votes_matched=matched,
        votes_contradicted=contradicted,
    )


def transcript(
    step_predictions: Sequence[str],
    prediction: str,
    *,
    outcomes: Sequence[str] | None = None,
    traps: Sequence[bool] | None = None,
    sectors: Sequence[int] | None = None,
    nav_rels: Sequence[str | None] | None = None,
    crops: Sequence[str | None] | None = None,
    confidence: float = 0.9,
) -> list[TranscriptStep]:
    """A transcript whose last step decides ``prediction``; earlier steps move ("moved" unless told)."""
    n = len(step_predictions)
    outcomes = list(outcomes) if outcomes is not None else ["moved"] * (n - 1) + ["none"]
    traps = list(traps) if traps is not None else [False] * n
    sectors = list(sectors) if sectors is not None else list(range(n))
    nav_rels = list(nav_rels) if nav_rels is not None else ["front-left"] * (n - 1) + [None]
    crops = list(crops) if crops is not None else [None] * n
    steps = []
    for k in range(n):
        last = k == n - 1
        steps.append(
            TranscriptStep(
                step=k + 1,
                sector=sectors[k] % 6,
                capture_tag=f"s{2 * (sectors[k] % 6)}_far",
                duplicate_view=k > 0 and outcomes[k - 1] in ("unreachable", "already_visited", "rejected"),
                detection_confidence=confidence,
                decision=prediction if last else "Unsure",
                step_prediction=step_predictions[k],
                nav_rel=nav_rels[k],
                nbv_reason="" if last else "look at the other side",
                outcome=outcomes[k],
                trap_view=traps[k],
                attributes=(attribute("color", "Yes", "Matched", 0.9 * (k + 1)),),
                crop_file=crops[k],
            )
        )
    return steps


def record(
    index: int,
    entry: dict[str, object],
    prediction: str,
    step_predictions: Sequence[str],
    *,
    unsure_as_negative: bool = True,
    stop_reason: str = "unanimous",
    model_calls: dict[str, int] | None = None,
    descriptions: Sequence[str] = ("a red mug", "mug with a handle", "red cup"),
    run_id: str = RUN_ID,
    **transcript_kwargs: object,
) -> EpisodeRecord:
    return build_episode_record(
        episode_index=index,
        index_record=entry,
        query_descriptions=descriptions,
        prediction=prediction,
        transcript=transcript(step_predictions, prediction, **transcript_kwargs),  # type: ignore[arg-type]
        stop_reason=stop_reason,
        run_id=run_id,
        unsure_as_negative=unsure_as_negative,
        category=str(entry["query_object_category"]),
        query_mode="attribute",
        model_calls=model_calls if model_calls is not None else {"verifier": len(step_predictions)},
    )


def infra(index: int, entry: dict[str, object], reason: str = "verifier node died", attempts: int = 1):
    return build_infra_failure_record(
        episode_index=index,
        index_record=entry,
        query_descriptions=("a red mug",),
        failure_reason=reason,
        run_id=RUN_ID,
        attempts=attempts,
    )


def six_episodes(unsure_as_negative: bool = True) -> list[EpisodeRecord]:
    """The hand-computed set used by the metrics tests (see test_metrics.py for every expected number).

    E0 positive mug  mugA: Yes in 1 step                                         -> correct
    E1 positive mug  mugB: Yes,Yes,No in 3 steps (trap arrival, then unreachable) -> wrong, flip_to_wrong
    E2 neg_same mug  mugA (query mugC): Yes,No in 2 steps                          -> correct, flip_to_correct
    E3 neg_same keys keysA (query keysB): Yes in 1 step                           -> wrong
    E4 neg_diff keys keysA (query mugA): No,Yes,No,No in 4 steps (already_visited, trap) -> correct, 2 flips
    E5 neg_diff mug  mugB (query keysB): No,No then forced Unsure (budget)        -> correct only as negative
    """
    uan = unsure_as_negative
    return [
        record(0, index_entry(target="mugA"), "Yes", ["Yes"], unsure_as_negative=uan),
        record(
            1,
            index_entry(episode="ep2", target="mugB"),
            "No",
            ["Yes", "Yes", "No"],
            outcomes=["moved", "unreachable", "none"],
            traps=[True, False, False],
            sectors=[0, 1, 1],
            unsure_as_negative=uan,
            stop_reason="final",
        ),
        record(
            2,
            index_entry(target="mugA", query="mugC", pair_type="neg_same"),
            "No",
            ["Yes", "No"],
            unsure_as_negative=uan,
        ),
        record(
            3,
            index_entry(
                scene="s2",
                episode="ep3",
                target="keysA",
                target_category="keys",
                query="keysB",
                pair_type="neg_same",
            ),
            "Yes",
            ["Yes"],
            unsure_as_negative=uan,
        ),
        record(
            4,
            index_entry(
                scene="s2",
                episode="ep3",
                target="keysA",
                target_category="keys",
                query="mugA",
                query_category="mug",
                pair_type="neg_diff",
            ),
            "No",
            ["No", "Yes", "No", "No"],
            outcomes=["moved", "already_visited", "moved", "none"],
            traps=[False, False, True, False],
            sectors=[0, 1, 1, 2],
            unsure_as_negative=uan,
            stop_reason="converged",
            model_calls={"verifier": 4, "llm_nbv": 3},
        ),
        record(
            5,
            index_entry(
                episode="ep2", target="mugB", query="keysB", query_category="keys", pair_type="neg_diff"
            ),
            "Unsure",
            ["No", "No"],
            outcomes=["moved", "none"],
            unsure_as_negative=uan,
            stop_reason="budget",
        ),
    ]
