"""The in-process evaluation mode: the same agent against the same environment, without ROS.

For regression checks and large sweeps. It writes exactly the records the ROS mode writes for the same
configuration (see ``transcripts.py``), into the same resumable store.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TextIO

from aiv_offline_sim.dataset.errors import DatasetError
from aiv_offline_sim.dataset.layout import PInVerifyDataset
from aiv_offline_sim.environment import PInVerifyEnv

from ..agent.env_driver import run_env_episode
from ..agent.factory import AgentFactory
from ..evaluation import ProgressBar, ResultsStore, RunConfig, make_episode_key, write_metrics
from .crops import CropWriter
from .scoring import failure_record, record_from_session
from .spec import EvalSpec


def run_config(spec: EvalSpec, code_version: str = "") -> RunConfig:
    return RunConfig(
        config=spec.fingerprint_config(),
        index_file=str(spec.sim["index_file"]),
        slice=spec.slice(),
        seed=int(spec.sim["seed"]),
        code_version=code_version,
        config_info=spec.config_info(),
        unsure_as_negative=bool(spec.evaluator["unsure_as_negative"]),
        name=str(spec.evaluator["run_name"] or Path(str(spec.evaluator["run_dir"])).name),
    )


def run_in_process(spec: EvalSpec, *, stream: TextIO = sys.stderr, code_version: str = "") -> Path:
    """Evaluate ``spec`` over its index slice; returns the run directory (results, metrics)."""
    run_dir = Path(str(spec.evaluator["run_dir"]))
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
    start, end = spec.slice()
    selected = range(start, len(records) if end is None else min(end, len(records)))
    crops = CropWriter(dataset, run_dir) if spec.evaluator["save_crops"] else None
    started = time.perf_counter()
    with ResultsStore.open(run_dir, run_config(spec, code_version)) as store:
        keys = {
            index: make_episode_key(
                records[index].scene, records[index].episode, records[index].query_object_id
            )
            for index in selected
        }
        todo = [index for index in selected if not store.is_complete(keys[index])]
        progress = ProgressBar(len(selected), initial=len(selected) - len(todo), stream=stream)
        for index in todo:
            pair = records[index]
            key = keys[index]
            attempts = store.attempts(key) + 1
            try:
                session, trace, summary = run_env_episode(env, index, factory, episode_key=key)
                files = None
                if crops is not None:
                    files = [
                        crops.write(
                            index,
                            entry.step.step,
                            pair.episode_path,
                            entry.step.capture_tag,
                            entry.step.crop.box,
                        )
                        for entry in trace.entries
                    ]
                record = record_from_session(
                    index=index,
                    pair=pair,
                    session=session,
                    trace=trace,
                    summary=summary,
                    run_id=store.run_id,
                    attempts=attempts,
                    unsure_as_negative=bool(spec.evaluator["unsure_as_negative"]),
                    crop_files=files,
                )
            except (DatasetError, OSError) as error:
                record = failure_record(
                    index=index,
                    pair=pair,
                    descriptions=(),
                    reason=f"dataset error: {error}",
                    run_id=store.run_id,
                    attempts=attempts,
                )
            store.append(record)
            progress.update(correct=record.is_correct, infra_failure=record.status != "ok")
        progress.close()
    write_metrics(run_dir, wall_time_s=time.perf_counter() - started)
    return run_dir
