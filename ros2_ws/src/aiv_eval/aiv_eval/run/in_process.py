"""The in-process evaluation mode: the same agent against the same environment, without ROS.

For regression checks and large sweeps. It writes exactly the records the ROS mode writes for the same
configuration (see ``records/transcripts.py`` and ``evaluation_loop.py``), into the same resumable store. That includes the
episodes the ROS mode never plays: a query the simulator will not hand out (``served_descriptions``) and one
the verifier refuses with its ``max_descriptions`` / ``max_description_chars`` (the query rules of
``aiv_dataset.query_rules``, limits from the spec's verifier section) are recorded as the same infrastructure
failures, with the same reasons, in the same order of checks. So is an episode whose files the simulator
refuses to load or show (invalid meta.json, images that do not match the camera or cannot be decoded, ...):
episodes are started and moved through :class:`~aiv_offline_sim.episode_service.EpisodeService`, the
simulator node's own core.

What cannot be evaluated at all is refused before the first episode, as in the ROS mode
(:func:`load_evaluation_inputs`): an index that repeats a pair, names a key twice on a line or holds none, a
slice that selects no pair, a description file that leads outside the dataset root.
"""

from __future__ import annotations

import sys
import threading
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from aiv_dataset.descriptions import DescriptionDB
from aiv_dataset.errors import DatasetError
from aiv_dataset.index_records import PairRecord
from aiv_dataset.layout import PInVerifyDataset
from aiv_dataset.query_rules import description_problem
from aiv_models.timing import StageClock
from aiv_offline_sim.environment import PInVerifyEnv
from aiv_offline_sim.episode_service import (
    EpisodeRequestError,
    EpisodeService,
)
from aiv_verifier.agent.factory import AgentFactory, build_detector, build_language_model
from aiv_verifier.core.types import LanguageModel

from .. import EpisodeRecord
from ..bench.stage_times import STEPS, stage_line
from ..records.scoring import (
    failure_record,
    record_from_session,
    start_refused_reason,
    verifier_failed_reason,
)
from .category_hint import benchmark_category_hint
from .crop_thumbnails import CropWriter
from .env_port import EnvPort, play_episode
from .evaluation_loop import EmptySelectionError, EpisodeJob, LoopOutcome, evaluate_index, selected_range
from .in_flight import PerThread, in_flight_problem, shared_detector
from .spec import EvalSpec, SpecError


@dataclass(frozen=True)
class EvaluationInputs:
    """The dataset files an evaluation reads before its first episode, read and checked."""

    dataset: PInVerifyDataset
    index_file: Path
    records: list[PairRecord]
    descriptions: DescriptionDB | None


def load_evaluation_inputs(spec: EvalSpec) -> EvaluationInputs:
    """Read the index and the description file ``spec`` names, as the simulator reads them at start-up.

    Raises :class:`DatasetError` (one line: file, line, field) when the evaluation cannot be run at all: a
    malformed index line, a pair listed twice, an index without pairs or a slice that selects none of them
    (either would be "evaluated" as a run over zero episodes), a description file leading outside the dataset
    root. ``aiv-eval run`` calls it before either mode starts, so both refuse the same inputs with the same
    message.
    """
    if str(spec.sim.get("tour_bags", "")).strip():
        # The evaluator scores against the index beside the simulator's dataset; tours become one on import.
        raise DatasetError(
            "aiv-eval evaluates a dataset directory: import the tours first (`aiv-bag import BAG ROOT`, then "
            "--dataset ROOT); bag_replay.launch.py serves tour bags directly",
            field="offline_sim.tour_bags",
        )
    dataset = PInVerifyDataset(str(spec.sim["dataset_root"]))
    index_file = dataset.index_path(str(spec.sim["index_file"]))
    records = dataset.read_pair_index(index_file)
    try:
        selected_range(len(records), spec.slice())
    except EmptySelectionError as error:
        raise DatasetError(f"evaluator {error}", path=index_file) from None
    return EvaluationInputs(dataset, index_file, records, dataset.load_descriptions())


def run_in_process(
    spec: EvalSpec,
    *,
    stream: TextIO | None = None,
    code_version: str = "",
    language_model: LanguageModel | None = None,
) -> LoopOutcome:
    """Evaluate ``spec`` over its index slice into ``spec.run_dir`` (results, metrics).

    ``language_model`` replaces the one ``language_model.*`` would build (a caller that runs several
    evaluations on one loaded model, e.g. ``aiv-eval bench-llm``). With ``evaluator.episodes_in_flight`` > 1
    every worker thread gets its own environment, episode service, crop writer and agent factory; the language
    model and the detector are built once and shared (:mod:`.in_flight` says why that is safe).
    """
    stream = sys.stderr if stream is None else stream  # resolved per call, not bound at import
    inputs = load_evaluation_inputs(spec)
    dataset, index_file, records = inputs.dataset, inputs.index_file, inputs.records
    agent_flat = spec.agent_flat()
    config = spec.agent_config()
    in_flight = int(spec.evaluator["episodes_in_flight"])
    problem = in_flight_problem(in_flight, str(config.get("agent", {}).get("kind", "pipeline")), "inprocess")
    if problem is not None:
        raise SpecError(problem)
    stream.write(f"[aiv-eval] {len(records)} pairs from {index_file} into {spec.run_dir}\n")
    if language_model is None:
        language_model = build_language_model(config)
    detector = shared_detector(build_detector(config), in_flight)
    first = AgentFactory.from_config(config, detector=detector, language_model=language_model)
    # A thread-safe model agent (an embedding agent: one loaded model) serves every worker thread.
    shared_agent = first.model_agent if getattr(first.model_agent, "thread_safe", False) else None

    def new_worker(factory: AgentFactory | None) -> _Worker:
        env = PInVerifyEnv(
            records,
            dataset,
            max_steps=int(spec.sim["max_steps"]),
            seed=int(spec.sim["seed"]),
            seed_policy=str(spec.sim["seed_policy"]),
            view_priority=str(spec.sim["view_priority"]),
            privileged=bool(spec.sim["privileged_output"]),
            descriptions=inputs.descriptions,
            # "eye" plays a dataset with height levels as one-level episodes (aiv-eval heights), as the node does
            height_levels=str(spec.sim["height_levels"]),
        )
        if factory is None:  # the pipeline's verifier counts its calls on itself: one per thread
            factory = AgentFactory.from_config(
                config, detector=detector, language_model=language_model, model_agent=shared_agent
            )
        crops = CropWriter(dataset, spec.run_dir) if spec.evaluator["save_crops"] else None
        return _Worker(EpisodeService(env, inputs.descriptions), factory, crops)

    # The first worker is built here, so a configuration the agent or the environment refuses stops the run
    # before anything is written; the first thread that asks takes it (the only one, one episode at a time).
    spare = [new_worker(first)]
    workers = PerThread(lambda: spare.pop() if spare else new_worker(None))
    unsure_as_negative = bool(spec.evaluator["unsure_as_negative"])
    verifier_values = spec.verifier_values()
    max_descriptions = int(verifier_values["max_descriptions"])
    max_description_chars = int(verifier_values["max_description_chars"])
    slice_start = spec.slice()[0]

    def refused(job: EpisodeJob, descriptions: tuple[str, ...], reason: str) -> EpisodeRecord:
        return failure_record(
            index=job.index,
            pair=job.pair,
            descriptions=descriptions,
            reason=reason,
            run_id=job.run_id,
            attempts=job.attempt,
        )

    # What this mode spends on the simulator's side of an episode, summed over the answered ones (the stage
    # line at the end; aiv-eval bench sets it against the ROS path's, see stage_times).
    stage_seconds: defaultdict[str, float] = defaultdict(float)
    stage_lock = threading.Lock()

    def run_episode(job: EpisodeJob) -> EpisodeRecord:
        worker: _Worker = workers.get()
        service, factory, crops = worker.service, worker.factory, worker.crops
        clock = StageClock()
        started = time.perf_counter()
        # The checks the ROS mode meets before an episode runs, in its order: the simulator's StartEpisode
        # (the query it may hand out, loading the episode's files, decoding the first view: the service is the
        # simulator node's own core), then the verifier's goal check (DECISION_FAILED, stop reason "rejected").
        try:
            start = service.start(index=job.index, slice_start=slice_start)
        except EpisodeRequestError as error:
            return refused(job, (), start_refused_reason(str(error)))
        clock.add("inprocess.start", started)
        problem = description_problem(start.descriptions, max_descriptions, max_description_chars)
        if problem is not None:
            return refused(job, start.descriptions, verifier_failed_reason("rejected", problem))
        try:
            # The agent is seeded with the simulator's opaque pair key and told the category the evaluator node
            # sends in its goal, exactly as the verifier node is.
            session, trace, summary = play_episode(
                EnvPort(service, start, clock),
                factory,
                episode_key=start.key,
                category_hint=benchmark_category_hint(agent_flat, job.pair),
            )
            if summary.decision is None:  # the verifier node answers DECISION_FAILED with these words
                reason = verifier_failed_reason(summary.stop_reason, summary.failure_reason)
                return refused(job, start.descriptions, reason)
            files = None
            if crops is not None:
                files = [
                    crops.write(
                        job.index,
                        entry.step.step,
                        job.pair.episode_path,
                        entry.step.capture_tag,
                        entry.step.crop.box,
                    )
                    for entry in trace.entries
                ]
            with stage_lock:
                for stage, seconds in clock.seconds.items():
                    stage_seconds[stage] += seconds
                for stage, seconds in session.clock.seconds.items():  # the agent's own, as in a Verdict
                    stage_seconds[f"agent.{stage}"] += seconds
                stage_seconds[STEPS] += len(trace.entries)
            return record_from_session(
                index=job.index,
                pair=job.pair,
                session=session,
                trace=trace,
                summary=summary,
                run_id=job.run_id,
                attempts=job.attempt,
                unsure_as_negative=unsure_as_negative,
                crop_files=files,
            )
        except (DatasetError, OSError) as error:
            return failure_record(
                index=job.index,
                pair=job.pair,
                descriptions=(),
                reason=f"dataset error: {error}",
                run_id=job.run_id,
                attempts=job.attempt,
            )

    outcome = evaluate_index(
        run_dir=spec.run_dir,
        run_config=spec.run_config(code_version),
        records=records,
        slice_=spec.slice(),
        max_attempts=int(spec.evaluator["max_attempts"]),
        run_episode=run_episode,
        stream=stream,
        episodes_in_flight=in_flight,
    )
    stream.write(stage_line("aiv-eval timing", stage_seconds) + "\n")  # a diagnostic, not a message
    return outcome


@dataclass(frozen=True)
class _Worker:
    """What one thread of the evaluation owns: its episodes never share these with another thread's."""

    service: EpisodeService
    factory: AgentFactory
    crops: CropWriter | None
