"""Look at every view of every pair and note what the verifier answered against what is true.

The calibration of the evidential fusion needs, per verifier backend, how its answers depend on the truth;
the visibility model needs where claims can be seen. Both come from this survey of a synthetic dataset with
privileged ground truth: for each pair of an index, the query is interpreted exactly as an episode would
(same interpreter, same category hint), and for every sector the simulator's map serves, the view is cropped
as in an episode (same box mode) and judged by the configured verifier. Each answer is stored with

- its claim kind and view hint (:mod:`aiv_verifier.claims`), and whether it judged the whole object;
- the view's quality (box side) and weight (detection confidence), as the evidential fusion sees them;
- the truth of the claim for the target (:func:`aiv_verifier.verification.oracle.claim_truth`, regardless of
  the view) and whether this view shows it (the exact oracle answers it Yes or No here).

Nothing here decides anything: the survey's rows are counted by :mod:`.calibration` and :mod:`.visibility_fit`.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from aiv_dataset.layout import PInVerifyDataset
from aiv_dataset.levels import EYE_LEVEL
from aiv_dataset.vocabulary import SECTOR_COUNT
from aiv_offline_sim.environment import PInVerifyEnv
from aiv_offline_sim.episode_service import EpisodeRequestError, EpisodeService
from aiv_verifier.agent.factory import AgentFactory
from aiv_verifier.agent.steps import view_input
from aiv_verifier.claims import attribute_claim_kind, is_object_claim, view_hint
from aiv_verifier.core.evidential import view_quality, view_weight
from aiv_verifier.core.types import Decision
from aiv_verifier.core.visibility import claim_vertical
from aiv_verifier.detection.base import BoxMode, crop_view
from aiv_verifier.query.types import QueryMode
from aiv_verifier.verification.oracle import OracleVerifier, claim_truth

from ..run.category_hint import benchmark_category_hint
from ..run.env_port import frame_from_observation


@dataclass(frozen=True)
class SurveyAnswer:
    """One claim as one view judged it."""

    name: str
    kind: str
    hint: str
    answer: Decision
    about_object: bool
    holds: bool | None  # the truth for the target (None: no ground truth says)
    visible: bool  # the exact oracle could judge it from this view


@dataclass(frozen=True)
class SurveyView:
    sector: int
    view_type: str
    quality: str
    weight: float
    answers: tuple[SurveyAnswer, ...]
    level: int = EYE_LEVEL  # camera height level (only ``survey_pairs(..., levels=True)`` leaves eye level)


@dataclass(frozen=True)
class SurveyPair:
    """One index pair: its label, its query's claims and every served view."""

    index: int
    pair_type: str
    label: int
    claims: tuple[tuple[str, str, str], ...]  # (name, kind, hint) in query order
    views: tuple[SurveyView, ...]
    verticals: tuple[str, ...] = ()  # each claim's vertical hint (claim_vertical), for the fit by level

    @property
    def holds(self) -> dict[str, bool | None]:
        out: dict[str, bool | None] = {}
        for view in self.views:
            for answer in view.answers:
                out.setdefault(answer.name, answer.holds)
        return out


@dataclass(frozen=True)
class SurveySource:
    """What the survey reads: the dataset, the index within it, the simulator's serving rules."""

    dataset_root: Path
    index_file: str
    max_steps: int = 6
    seed: int = 42
    seed_policy: str = "per_episode_fixed"
    view_priority: str = "far"
    height_levels: str = "all"  # the simulator's offline_sim.height_levels ("eye": one-level episodes)


def survey_pairs(
    source: SurveySource,
    config: Mapping[str, Any],
    agent_flat: Mapping[str, Any],
    *,
    limit: int | None = None,
    stream: TextIO | None = None,
    levels: bool = False,
) -> Iterator[SurveyPair]:
    """Every pair of the index (up to ``limit``), surveyed with the verifier ``config`` describes.

    ``levels`` also surveys the views off eye level an episode with camera height levels serves (after the
    eye-level ones, each with its ``level``); without it only eye-level views are surveyed, as the calibration
    and visibility fits have always counted them."""
    stream = sys.stderr if stream is None else stream
    dataset = PInVerifyDataset(str(source.dataset_root))
    records = dataset.read_pair_index(dataset.index_path(source.index_file))
    descriptions = dataset.load_descriptions()
    env = PInVerifyEnv(
        records,
        dataset,
        max_steps=source.max_steps,
        seed=source.seed,
        seed_policy=source.seed_policy,
        view_priority=source.view_priority,
        privileged=True,
        descriptions=descriptions,
        height_levels=source.height_levels,
    )
    service = EpisodeService(env, descriptions)
    factory = AgentFactory.from_config(config)
    oracle = OracleVerifier.for_dataset(source.dataset_root)
    library = oracle.library
    settings = factory.settings
    count = len(records) if limit is None else min(limit, len(records))
    for index in range(count):
        pair = records[index]
        try:
            start = service.start(index=index)
        except EpisodeRequestError as error:
            stream.write(f"[survey] pair {index} skipped: {error}\n")
            continue
        query = factory.interpreter.interpret(
            start.descriptions, QueryMode(settings.query_mode), benchmark_category_hint(agent_flat, pair)
        )
        query_truth = library.find(pair.query_object_id)
        target_truth = library.find(pair.target_object_id)
        if query_truth is None or target_truth is None:
            stream.write(f"[survey] pair {index} skipped: no privileged ground truth for its objects\n")
            continue
        truths = {item.name: claim_truth(item, query_truth, target_truth) for item in query.attributes}
        claims = tuple(
            (item.name, attribute_claim_kind(item), view_hint(item.evidence_phrase))
            for item in query.attributes
        )
        views = []
        off_eye = [level for level in start.observation.levels if level != EYE_LEVEL] if levels else []
        served = [(sector, EYE_LEVEL) for sector in env.sector_map.available]
        served += [(sector, level) for level in off_eye for sector in range(SECTOR_COUNT)]
        for sector, level in served:
            observation = env.survey(sector, level)
            if observation is None:
                continue
            frame = frame_from_observation(observation, service.image_of(observation))
            detections = frame.detections
            if settings.bbox_mode is BoxMode.DETECTOR and factory.detector is not None:
                detections = tuple(factory.detector.detect(frame.image, query.category or "object"))
            crop, _ = crop_view(frame.image, settings.bbox_mode, gt_box=frame.gt_box, detections=detections)
            view = view_input(frame, crop, query, start.key, sector)  # each sector its own noisy-oracle draw
            answers = factory.verifier.verify(view, query.attributes) if query.attributes else []
            exact = oracle.verify(view, query.attributes) if query.attributes else []
            privileged = observation.privileged
            views.append(
                SurveyView(
                    sector=sector,
                    view_type=privileged.view_type if privileged is not None else "",
                    quality=view_quality(crop.box),
                    weight=view_weight(crop.box, crop.confidence),
                    answers=tuple(
                        SurveyAnswer(
                            name=answer.attribute,
                            kind=kind,
                            hint=hint,
                            answer=answer.answer,
                            about_object=is_object_claim(answer.debug),
                            holds=truths.get(answer.attribute),
                            visible=truth_answer.answer is not Decision.UNSURE,
                        )
                        for answer, truth_answer, (_, kind, hint) in zip(answers, exact, claims, strict=True)
                    ),
                    level=level,
                )
            )
        verticals = tuple(claim_vertical(item.name, item.evidence_phrase) for item in query.attributes)
        yield SurveyPair(index, pair.pair_type, pair.label, claims, tuple(views), verticals)


def pair_to_json(pair: SurveyPair) -> dict[str, Any]:
    """A surveyed pair as JSON (``aiv-eval calibrate --save-survey``), so a fit can be redone without the
    verifier. A view's ``level`` and the pair's ``verticals`` are written only for a pair with views off eye
    level, so a one-level survey file is what it always was."""
    views: list[dict[str, Any]] = []
    for view in pair.views:
        item: dict[str, Any] = {
            "sector": view.sector,
            "view_type": view.view_type,
            "quality": view.quality,
            "weight": view.weight,
            "answers": [
                [a.name, a.kind, a.hint, a.answer.value, a.about_object, a.holds, a.visible]
                for a in view.answers
            ],
        }
        if view.level != EYE_LEVEL:
            item["level"] = view.level
        views.append(item)
    out: dict[str, Any] = {
        "index": pair.index,
        "pair_type": pair.pair_type,
        "label": pair.label,
        "claims": [list(claim) for claim in pair.claims],
        "views": views,
    }
    if any(view.level != EYE_LEVEL for view in pair.views):
        out["verticals"] = list(pair.verticals)
    return out


def pair_from_json(data: Mapping[str, Any]) -> SurveyPair:
    return SurveyPair(
        index=int(data["index"]),
        pair_type=str(data["pair_type"]),
        label=int(data["label"]),
        claims=tuple((str(a), str(b), str(c)) for a, b, c in data["claims"]),
        views=tuple(
            SurveyView(
                sector=int(view["sector"]),
                view_type=str(view["view_type"]),
                quality=str(view["quality"]),
                weight=float(view["weight"]),
                answers=tuple(
                    SurveyAnswer(
                        str(n), str(k), str(h), Decision(a), bool(o), t if t is None else bool(t), bool(v)
                    )
                    for n, k, h, a, o, t, v in view["answers"]
                ),
                level=int(view.get("level", EYE_LEVEL)),
            )
            for view in data["views"]
        ),
        verticals=tuple(str(item) for item in data.get("verticals", ())),
    )


__all__ = [
    "SurveyAnswer",
    "SurveyPair",
    "SurveySource",
    "SurveyView",
    "pair_from_json",
    "pair_to_json",
    "survey_pairs",
]
