"""One evaluation configuration, read from the same params YAML the three nodes are launched with.

The file holds a ``ros__parameters`` section per node (``offline_sim``, ``verifier``, ``evaluator``; written
``/**/offline_sim`` so the section also reaches a namespaced node, or plain). The in-process mode reads it
directly; the ROS mode passes the spec to the nodes as ``--params-file``. ``--set node.param=value`` overrides
apply to both the same way, which is what lets the two modes be compared.

Names, types, choices and ranges are checked against the nodes' own parameter tables (the ones the nodes
declare), nested sections are flattened the way ROS flattens them (``agent: {nbv: random}`` is
``agent.nbv: random``), and anything a node would refuse is refused here, in one line, before a run starts.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from aiv_common.parameter_spec import (
    ParameterError,
    ParameterSpec,
    flatten_parameters,
    parameter_defaults,
    table_by_name,
    unknown_parameter_message,
)
from aiv_offline_sim.offline_sim_parameters import SIM_PARAMETERS, check_sim_values
from aiv_verifier.verifier_parameters import (
    check_verifier_values,
    config_parameter_defaults,
    factory_config,
    verifier_parameters,
)

from .. import RunConfig
from . import identity
from .evaluator_parameters import EVALUATOR_PARAMETERS
from .pairs import check_pair_values

NODES = ("offline_sim", "verifier", "evaluator")
#: How the spec names a node's section when it writes a params file: any namespace matches.
WILDCARD = "/**/"
#: Where an offline evaluation differs from a node's own default: the simulator publishes its ground truth,
#: because the default agent takes its boxes from it (a robot-facing simulator keeps labels to itself).
EVALUATION_OVERRIDES: dict[str, dict[str, Any]] = {"offline_sim": {"privileged_output": True}}
SIM_DEFAULTS: dict[str, Any] = {**parameter_defaults(SIM_PARAMETERS), **EVALUATION_OVERRIDES["offline_sim"]}
EVALUATOR_DEFAULTS: dict[str, Any] = parameter_defaults(EVALUATOR_PARAMETERS)


def node_table(node: str) -> tuple[ParameterSpec, ...]:
    """The table a node declares, which its section is checked against."""
    if node == "offline_sim":
        return SIM_PARAMETERS
    if node == "evaluator":
        return EVALUATOR_PARAMETERS
    return verifier_parameters()  # built on first use (it imports the verifier backends)


class SpecError(ValueError):
    """The params file or an override is invalid; the message names the file, node and parameter."""


def _parse_value(text: str) -> Any:
    value = yaml.safe_load(text)
    return text if isinstance(value, (dict, list)) else value


def node_of_section(key: Any) -> str | None:
    """The node a params-file section is for: ``offline_sim``, ``/offline_sim`` or ``/**/offline_sim``."""
    if not isinstance(key, str):
        return None
    for prefix in (WILDCARD, "/", ""):
        if key.startswith(prefix) and key[len(prefix) :] in NODES:
            return key[len(prefix) :]
    return None


@functools.cache
def _indexed_table(node: str) -> dict[str, ParameterSpec]:
    return table_by_name(node_table(node))


#: Rules between one node's parameters, the same ones the node applies at start-up.
CROSS_CHECKS: dict[str, Callable[[Mapping[str, Any]], None]] = {
    "offline_sim": check_sim_values,
    "verifier": check_verifier_values,
    "evaluator": check_pair_values,
}


@dataclass
class EvalSpec:
    """The three nodes' parameter values of one evaluation.

    ``sim`` and ``evaluator`` hold every parameter of their node (defaults filled in); ``verifier`` holds only
    what the file or an override set, the node's defaults filling in the rest (:meth:`agent_flat`).
    """

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
            first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise SpecError(f"{path}: cannot read params file: {first_line}") from error
        if not isinstance(document, Mapping):
            raise SpecError(f"{path}: expected a mapping of node names")
        spec = cls(source=str(path))
        for key, section in document.items():
            node = node_of_section(key)
            if node is None:
                raise SpecError(
                    f"{path}: unknown node section {key!r}; expected {', '.join(NODES)} (or /**/<node>)"
                )
            params = (section or {}).get("ros__parameters", {}) if isinstance(section, Mapping) else None
            if not isinstance(params, Mapping):
                raise SpecError(f"{path}: {key}.ros__parameters must be a mapping")
            try:
                flat = flatten_parameters(params)
            except ParameterError as error:
                raise SpecError(f"{path}: {node} {error}") from error
            for name, value in flat.items():
                spec.set(node, name, value, where=str(path))
        for item in overrides:
            spec.apply_override(item)
        spec.check()
        return spec

    def apply_override(self, item: str) -> None:
        """``node.param=value`` (e.g. ``verifier.agent.nbv=random``); values are parsed as YAML scalars."""
        if "=" not in item or "." not in item.split("=", 1)[0]:
            raise SpecError(f"override {item!r}: expected node.param=value, e.g. verifier.agent.nbv=random")
        target, text = item.split("=", 1)
        node, name = target.split(".", 1)
        self.set(node, name, _parse_value(text), where=f"override {item!r}")

    def set(self, node: str, name: str, value: Any, *, where: str) -> None:
        """Set one parameter after checking it against the node's own table (name, type, choices, range)."""
        if node not in NODES:
            raise SpecError(f"{where}: unknown node {node!r}; expected {', '.join(NODES)}")
        specs = _indexed_table(node)
        if name not in specs:
            raise SpecError(f"{where}: {unknown_parameter_message(name, specs, f'{node}.{name}')}")
        try:
            checked = specs[name].check(value)
        except ParameterError as error:
            raise SpecError(f"{where}: {node} {error}") from error
        self._values(node)[name] = checked

    def check(self) -> None:
        """Rules between a node's parameters (e.g. default_step_budget <= max_step_budget), as the nodes apply
        them at start-up."""
        for node, rule in CROSS_CHECKS.items():
            values = {**parameter_defaults(node_table(node)), **self._values(node)}
            try:
                rule(values)
            except ParameterError as error:
                raise SpecError(f"{self.source or 'spec'}: {node} {error}") from error

    def _values(self, node: str) -> dict[str, Any]:
        return {"offline_sim": self.sim, "verifier": self.verifier, "evaluator": self.evaluator}[node]

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
        return factory_config(self.agent_flat())

    def verifier_values(self) -> dict[str, Any]:
        """Every verifier parameter (defaults filled in), e.g. the query limits the in-process mode applies as
        the node would."""
        return {**parameter_defaults(node_table("verifier")), **self.verifier}

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
        """A params file with every value of this spec, for the ROS nodes (keeps overrides in one place).

        Sections are keyed ``/**/<node>`` so the nodes find them in whatever namespace they are started.
        """
        document = {f"{WILDCARD}{node}": {"ros__parameters": dict(self._values(node))} for node in NODES}
        path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
