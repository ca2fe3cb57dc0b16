"""Turn a finished episode (from either driver) into the results record; the evaluator holds the labels.

A Verdict is read by its field names and the codes of :mod:`aiv_verifier.verdict_codes`, never through a
message class: the in-process evaluation imports this module and must load no ROS code.
"""

from __future__ import annotations

import math
from typing import Any

from aiv_dataset.index_records import PairRecord
from aiv_verifier.agent.protocol import AgentSession
from aiv_verifier.agent.steps import AgentStep
from aiv_verifier.agent.trace import EpisodeSummary, EpisodeTrace
from aiv_verifier.verdict_codes import decision_from_code, model_calls_from_timings

from .episode import (
    ClaimOpinion,
    EpisodeEvidence,
    EpisodeRecord,
    build_episode_record,
    build_infra_failure_record,
)
from .transcripts import transcript_from_reports, transcript_from_trace


def index_fields(record: PairRecord) -> dict[str, Any]:
    return {
        "scene": record.scene,
        "episode": record.episode,
        "query_object_id": record.query_object_id,
        "query_object_category": record.query_object_category,
        "target_object_id": record.target_object_id,
        "target_object_category": record.target_object_category,
        "label": record.label,
        "pair_type": record.pair_type,
    }


def record_from_session(
    *,
    index: int,
    pair: PairRecord,
    session: AgentSession,
    trace: EpisodeTrace[AgentStep],
    summary: EpisodeSummary,
    run_id: str,
    attempts: int,
    unsure_as_negative: bool,
    crop_files: list[str | None] | None,
) -> EpisodeRecord:
    assert summary.decision is not None
    return build_episode_record(
        episode_index=index,
        index_record=index_fields(pair),
        query_descriptions=session.query.descriptions,
        prediction=summary.decision.value,
        transcript=transcript_from_trace(trace, crop_files),
        stop_reason=summary.stop_reason,
        run_id=run_id,
        unsure_as_negative=unsure_as_negative,
        attempts=attempts,
        category=session.query.category,
        query_mode=session.query.mode.value,
        model_calls=summary.model_calls,
        evidence=_evidence(
            summary.probability,
            summary.unverified,
            [
                (row.name, row.claim_kind, row.belief, row.disbelief, row.uncertainty)
                for row in (trace.entries[-1].step.attributes if trace.entries else ())
            ],
        ),
    )


def record_from_verdict(
    *,
    index: int,
    pair: PairRecord,
    descriptions: tuple[str, ...],
    verdict: Any,
    run_id: str,
    attempts: int,
    unsure_as_negative: bool,
    crop_files: list[str | None] | None,
) -> EpisodeRecord:
    decision = decision_from_code(int(verdict.decision))
    if decision is None:
        raise ValueError("a failed verdict has no record; use failure_record")
    return build_episode_record(
        episode_index=index,
        index_record=index_fields(pair),
        query_descriptions=descriptions,
        prediction=decision.value,
        transcript=transcript_from_reports(verdict.transcript, crop_files),
        stop_reason=verdict.stop_reason,
        run_id=run_id,
        unsure_as_negative=unsure_as_negative,
        attempts=attempts,
        category=verdict.category,
        query_mode=verdict.query_mode,
        model_calls=model_calls_from_timings(verdict.timings),
        evidence=_evidence(
            _optional_float(getattr(verdict, "probability", math.nan)),
            tuple(getattr(verdict, "unverified_attributes", ())),
            [
                (
                    item.name,
                    getattr(item, "claim_kind", ""),
                    getattr(item, "belief", math.nan),
                    getattr(item, "disbelief", math.nan),
                    item.uncertainty,
                )
                for item in verdict.attributes
            ],
        ),
    )


def _optional_float(value: float) -> float | None:
    return None if value is None or math.isnan(float(value)) else float(value)


def _evidence(
    probability: float | None,
    unverified: tuple[str, ...],
    claims: list[tuple[str, str, float, float, float]],
) -> EpisodeEvidence | None:
    """The record's evidence part, the same from a session (in-process) and from a Verdict (ROS)."""
    if probability is None:
        return None
    return EpisodeEvidence(
        probability,
        tuple(unverified),
        tuple(
            ClaimOpinion(name, kind, float(belief), float(disbelief), float(uncertainty))
            for name, kind, belief, disbelief, uncertainty in claims
            if not math.isnan(float(uncertainty))
        ),
    )


def start_refused_reason(message: str) -> str:
    """The failure reason of an episode the simulator would not start (unknown key, broken episode, a query it
    must not hand out), in the words both modes record: ROS from the StartEpisode refusal, in-process from the
    same check (:func:`aiv_offline_sim.episode_service.served_descriptions`)."""
    return f"the simulator refused the episode: {message}"


def verifier_failed_reason(stop_reason: str, failure_reason: str) -> str:
    """The failure reason of an episode whose verdict is ``DECISION_FAILED``; a goal refused by the query
    rules has ``stop_reason`` "rejected", which the in-process mode reproduces without a verdict message."""
    return f"the verifier failed ({stop_reason}): {failure_reason}"


def failure_record(
    *, index: int, pair: PairRecord, descriptions: tuple[str, ...], reason: str, run_id: str, attempts: int
) -> EpisodeRecord:
    return build_infra_failure_record(
        episode_index=index,
        index_record=index_fields(pair),
        query_descriptions=descriptions,
        failure_reason=reason,
        run_id=run_id,
        attempts=attempts,
    )
