"""One evaluation configuration, read from the same params YAML the three nodes are launched with.

The file holds a ``ros__parameters`` section per node (``offline_sim``, ``verifier``, ``evaluator``). The
in-process mode reads it directly; the ROS mode passes it to the nodes as ``--params-file``. ``--set
node.param=value`` overrides apply to both the same way, which is what lets the two modes be compared.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from aiv_verifier.config_schema import config_parameter_defaults, nested_config

from . import RunConfig, identity

NODES = ("offline_sim", "verifier", "evaluator")
SIM_DEFAULTS: dict[str, Any] = {
    "dataset_root": "",
    "index_file": "val/pv_index_all.jsonl",
    "max_steps": 6,
    "seed": 42,
    "seed_policy": "per_episode_fixed",
    "view_priority": "far",
    "privileged_output": True,
}
EVALUATOR_DEFAULTS: dict[str, Any] = {
    "run_dir": "runs/offline_eval",
    "run_name": "",
    "slice_start": 0,
    "slice_end": -1,
    "max_attempts": 2,
    "save_crops": True,
    "unsure_as_negative": True,
    "episode_timeout_s": 300.0,
    "server_wait_s": 60.0,
    "write_report": True,
    "dataset_root": "",
    "simulator_node": "offline_sim",
    "verifier_node": "verifier",
    "start_episode_service": "start_episode",
    "verify_action": "verify_instance",
}


class SpecError(ValueError):
    """The params file or an override is invalid; the message names the file, node and parameter."""


def _parse_value(text: str) -> Any:
    value = yaml.safe_load(text)
    return text if isinstance(value, (dict, list)) else value


def _typed_like(default: Any, value: Any, where: str) -> Any:
    """A value of the declared parameter's type (a ROS node refuses an int for a double parameter)."""
    if default is None or value is None:
        return value
    if isinstance(default, float) and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(default, str) and isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)  # `--set evaluator.run_name=2024` is a name, not a number
    if isinstance(default, bool) != isinstance(value, bool) or not isinstance(value, type(default)):
        raise SpecError(f"{where}: expected a {type(default).__name__}, got {value!r}")
    return value


@dataclass
class EvalSpec:
    sim: dict[str, Any] = field(default_factory=lambda: dict(SIM_DEFAULTS))
    verifier: dict[str, Any] = field(default_factory=dict)
    evaluator: dict[str, Any] = field(default_factory=lambda: dict(EVALUATOR_DEFAULTS))
    source: str = ""

    @classmethod
    def load(cls, path: str | Path, overrides: Sequence[str] = ()) -> EvalSpec:
        path = Path(path)
        try:
            document = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError) as error:
            raise SpecError(f"{path}: cannot read params file: {error}") from error
        if not isinstance(document, Mapping):
            raise SpecError(f"{path}: expected a mapping of node names")
        spec = cls(source=str(path))
        for node, section in document.items():
            if node not in NODES:
                raise SpecError(f"{path}: unknown node {node!r}; expected {list(NODES)}")
            params = (section or {}).get("ros__parameters", {}) if isinstance(section, Mapping) else None
            if not isinstance(params, Mapping):
                raise SpecError(f"{path}: {node}.ros__parameters must be a mapping")
            for name, value in params.items():
                spec.set(node, str(name), value, where=str(path))
        for item in overrides:
            spec.apply_override(item)
        return spec

    def apply_override(self, item: str) -> None:
        """``node.param=value`` (e.g. ``verifier.agent.nbv=random``); values are parsed as YAML scalars."""
        if "=" not in item or "." not in item.split("=", 1)[0]:
            raise SpecError(f"override {item!r}: expected node.param=value, e.g. verifier.agent.nbv=random")
        target, text = item.split("=", 1)
        node, name = target.split(".", 1)
        self.set(node, name, _parse_value(text), where=f"override {item!r}")

    def set(self, node: str, name: str, value: Any, *, where: str) -> None:
        if node == "offline_sim":
            table, known = self.sim, SIM_DEFAULTS
        elif node == "evaluator":
            table, known = self.evaluator, EVALUATOR_DEFAULTS
        elif node == "verifier":
            # The verifier also has wiring parameters (topics, timeouts) that are not part of the agent.
            table, known = self.verifier, None
        else:
            raise SpecError(f"{where}: unknown node {node!r}; expected {list(NODES)}")
        if known is not None and name not in known:
            raise SpecError(f"{where}: unknown parameter {node}.{name}; known: {sorted(known)}")
        default = known.get(name) if known is not None else config_parameter_defaults().get(name)
        table[name] = _typed_like(default, value, f"{where}: {node}.{name}")

    def set_dataset(self, root: str) -> None:
        """Point every node at one dataset (sim, evaluator labels, oracle ground truth)."""
        self.sim["dataset_root"] = root
        self.verifier["verifier.dataset_root"] = root

    def agent_flat(self) -> dict[str, Any]:
        """All agent/backend parameters of the verifier (defaults filled in), as the node would declare them."""
        defaults = config_parameter_defaults()
        flat = dict(defaults)
        for name, value in self.verifier.items():
            if name in defaults:
                flat[name] = value
        return flat

    def agent_config(self) -> dict[str, Any]:
        return nested_config(self.agent_flat())

    def fingerprint_config(self) -> dict[str, Any]:
        """What identifies the run's behaviour (mode-independent, so ROS and in-process runs share run ids)."""
        return identity.fingerprint_config(self.sim, self.agent_flat())

    def config_info(self) -> dict[str, Any]:
        return identity.config_info(self.sim, self.agent_flat())

    def slice(self) -> tuple[int, int | None]:
        try:
            return identity.evaluation_slice(
                int(self.evaluator["slice_start"]), int(self.evaluator["slice_end"])
            )
        except ValueError as error:
            raise SpecError(f"{self.source or 'spec'}: evaluator {error}") from error

    @property
    def run_dir(self) -> Path:
        return Path(str(self.evaluator["run_dir"]))

    def run_config(self, code_version: str = "") -> RunConfig:
        return identity.build_run_config(
            sim=self.sim,
            agent_flat=self.agent_flat(),
            slice_=self.slice(),
            unsure_as_negative=bool(self.evaluator["unsure_as_negative"]),
            name=str(self.evaluator["run_name"] or self.run_dir.name),
            code_version=code_version,
        )

    def write(self, path: Path) -> None:
        """A params file with every value of this spec, for the ROS nodes (keeps overrides in one place)."""
        document = {
            "offline_sim": {"ros__parameters": dict(self.sim)},
            "verifier": {"ros__parameters": dict(self.verifier)},
            "evaluator": {"ros__parameters": dict(self.evaluator)},
        }
        path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
