"""Evaluation configurations for tests: the oracle with veto fusion on a generated dataset, by name."""

from __future__ import annotations

from pathlib import Path

ORACLE_VETO_PARAMS = """
offline_sim:
  ros__parameters:
    index_file: val/pv_index_all.jsonl
verifier:
  ros__parameters:
    verifier.backend: oracle
    agent.fusion: veto
evaluator:
  ros__parameters:
    run_dir: {run_dir}
"""


def oracle_veto_spec(tmp_path: Path, root: Path, name: str, *overrides: str):
    """An EvalSpec writing to ``tmp_path/name``, every node pointed at the dataset ``root``."""
    from aiv_eval.run.spec import EvalSpec

    params = tmp_path / f"{name}.yaml"
    params.write_text(ORACLE_VETO_PARAMS.format(run_dir=tmp_path / name))
    spec = EvalSpec.load(params, overrides)
    spec.set_dataset(str(root))
    return spec
