"""The in-process evaluation mode: the same agent against the same environment, without ROS.

For regression checks and large sweeps. It writes exactly the records the ROS mode writes for the same
configuration (see ``transcripts.py`` and ``loop.py``), into the same resumable store.
"""

from __future__ import annotations

import sys
from typing import TextIO

from aiv_dataset.errors import DatasetError
from aiv_dataset.layout import PInVerifyDataset
from aiv_offline_sim.environment import PInVerifyEnv
from aiv_offline_sim.episode_service import pair_key
from aiv_verifier.agent.factory import AgentFactory

from . import EpisodeRecord
from .crop_thumbnails import CropWriter
from .env_port import run_env_episode
from .loop import EpisodeJob, LoopOutcome, evaluate_index
from .scoring import failure_record, record_from_session
from .spec import EvalSpec


def run_in_process(spec: EvalSpec, *, stream: TextIO = sys.stderr, code_version: str = "") -> LoopOutcome:
    """Evaluate ``spec`` over its index slice into ``spec.run_dir`` (results, metrics)."""
    dataset = PInVerifyDataset(str(spec.sim["dataset_root"]))
    records = dataset.read_pair_index(str(spec.sim["index_file"]))
    env = PInVerifyEnv(
        records,
        dataset,
        max_steps=int(spec.sim["max_steps"]),
        seed=int(spec.sim["seed"]),
        seed_policy=str(spec.sim["seed_policy"]),
        view_priority=str(spec.sim["view_priority"]),
        privileged=bool(spec.sim["privileged_output"]),
        descriptions=dataset.load_descriptions(),
    )
    factory = AgentFactory.from_config(spec.agent_config())
    crops = CropWriter(dataset, spec.run_dir) if spec.evaluator["save_crops"] else None
    unsure_as_negative = bool(spec.evaluator["unsure_as_negative"])

    def run_episode(job: EpisodeJob) -> EpisodeRecord:
        try:
            # The agent is seeded with the simulator's opaque pair key, exactly as the verifier node is.
            session, trace, summary = run_env_episode(env, job.index, factory, episode_key=pair_key(job.pair))
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

    return evaluate_index(
        run_dir=spec.run_dir,
        run_config=spec.run_config(code_version),
        records=records,
        slice_=spec.slice(),
        max_attempts=int(spec.evaluator["max_attempts"]),
        run_episode=run_episode,
        stream=stream,
    )
