"""Nested configuration dataclasses ⇄ flat, dotted ROS parameter names.

Backends describe their knobs as frozen dataclasses (possibly nested: ``classical.region.border_px``). The
node declares one ROS parameter per scalar field, with the dataclass default, so ``ros2 param list`` shows every
knob and a params YAML can set any of them; the factory rebuilds the dataclasses from the nested mapping and
refuses unknown keys, so a typo in a YAML is an error instead of a silently ignored setting.

:func:`config_parameter_specs` describes the same knobs as :class:`~aiv_common.parameter_spec.ParameterSpec`
values: the description comes from the dataclass (field metadata, an attribute docstring, or the class
docstring's entry for the field), strategy names list their choices, and shares, rates and pixel counts carry
their range, so the node and ``aiv-eval`` refuse a bad value with one line before anything is built.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
import itertools
import re
import textwrap
import typing
from collections.abc import Mapping
from enum import Enum
from typing import TYPE_CHECKING, Any, TypeVar

from aiv_common.parameter_spec import ParameterSpec
from aiv_common.setting_fields import parameter_spec, setting_doc

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

T = TypeVar("T", bound="DataclassInstance")
SCALARS = (bool, int, float, str)


def flatten_defaults(instance: Any, prefix: str) -> dict[str, Any]:
    """``{"prefix.field": default}`` for every scalar field, recursing into nested dataclasses.

    Sequence-valued fields are skipped: ROS cannot declare an empty array parameter without a type, and none
    of them is something a deployment tunes per robot.
    """
    flat: dict[str, Any] = {}
    for field in dataclasses.fields(instance):
        value = getattr(instance, field.name)
        name = f"{prefix}.{field.name}"
        if dataclasses.is_dataclass(value):
            flat.update(flatten_defaults(value, name))
        elif isinstance(value, Enum):
            flat[name] = value.value
        elif isinstance(value, SCALARS):
            flat[name] = value
    return flat


def dataclass_from_mapping(cls: type[T], values: Mapping[str, Any], where: str) -> T:
    """Build ``cls`` from a nested mapping; unknown keys raise ValueError naming ``where.key``."""
    if not isinstance(values, Mapping):
        raise ValueError(f"{where} must be a mapping, got {type(values).__name__}")
    hints = typing.get_type_hints(cls)
    known = {field.name: field for field in dataclasses.fields(cls)}
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise ValueError(
            f"unknown parameter(s) {[f'{where}.{key}' for key in unknown]}; known: {sorted(known)}"
        )
    kwargs: dict[str, Any] = {}
    for name, value in values.items():
        hint = hints.get(name)
        if isinstance(hint, type) and dataclasses.is_dataclass(hint):
            kwargs[name] = dataclass_from_mapping(hint, value, f"{where}.{name}")
        elif hint is float and isinstance(value, int) and not isinstance(value, bool):
            kwargs[name] = float(value)  # YAML "1" for a float knob
        else:
            kwargs[name] = value
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{where}: {error}") from error


def nested_config(flat: Mapping[str, Any]) -> dict[str, Any]:
    """``{"agent.nbv": "random"}`` → ``{"agent": {"nbv": "random"}}``."""
    config: dict[str, Any] = {}
    for dotted, value in flat.items():
        node = config
        *parents, leaf = dotted.split(".")
        for name in parents:
            node = node.setdefault(name, {})
        node[leaf] = value
    return config


def config_parameter_defaults() -> dict[str, Any]:
    """Every agent/backend knob as a dotted parameter name with its default; they nest into the factory config."""
    return dict(_parameter_defaults())


@functools.cache
def _parameter_defaults() -> dict[str, Any]:
    # Built once: an evaluation spec consults it for every parameter it sets.
    from .agent.settings import AgentSettings
    from .model_config import (
        DetectorParams,
        EmbeddingParams,
        LanguageModelParams,
        MllmVerifierParams,
        TrainedAgentParams,
    )
    from .query.config import QueryConfig
    from .verification.classical.backend import ClassicalParams
    from .verification.oracle import NoiseModel

    defaults: dict[str, Any] = {}
    defaults.update(flatten_defaults(AgentSettings(), "agent"))
    defaults["verifier.backend"] = "classical"
    defaults["verifier.dataset_root"] = ""
    defaults["verifier.calibration_file"] = ""
    defaults["verifier.calibration_key"] = ""
    defaults.update(flatten_defaults(NoiseModel(), "verifier.noise"))
    defaults.update(flatten_defaults(ClassicalParams(), "verifier.classical"))
    defaults.update(flatten_defaults(MllmVerifierParams(), "verifier.mllm"))
    defaults.update(flatten_defaults(QueryConfig(), "query"))
    defaults.update(flatten_defaults(DetectorParams(), "detector"))
    defaults.update(flatten_defaults(EmbeddingParams(), "embedding"))
    defaults.update(flatten_defaults(LanguageModelParams(), "language_model"))
    defaults.update(flatten_defaults(TrainedAgentParams(), "trained"))
    return defaults


def config_parameter_specs() -> tuple[ParameterSpec, ...]:
    """Every agent/backend knob as a parameter spec (same names, order and defaults as the defaults above)."""
    return _parameter_specs()


#: Knobs that are no dataclass field, or whose dataclass says nothing about them.
_DESCRIPTIONS: dict[str, str] = {
    "agent.query_mode": "how descriptions become checkable items: attribute (one item per attribute), direct "
    "(each description whole), merged (one merged description); a goal may override it",
    "agent.decision_mode": "auto = early_exit for a step budget of 1, else vote_till_end",
    "agent.bbox_mode": "where object boxes come from: gt (privileged ground truth), detections (external "
    "Detection2DArray topic), detector (a detector backend)",
    "agent.base_seed": "seed of the seeded strategies (random next-best-view)",
    "verifier.backend": "per-view verifier: classical (weight-free), oracle / noisy_oracle (privileged ground "
    "truth of a synthetic dataset)",
    "verifier.dataset_root": "dataset with privileged_gt/ (the oracle verifiers only)",
    "verifier.calibration_file": "reliability of the per-view answers for the evidential fusion and the "
    "uncertainty next-best-view, written by aiv-eval calibrate ('' = the shipped table); read and checked at "
    "start-up",
    "verifier.calibration_key": "which backend table of the calibration file to use ('' = the backend's own "
    "name: classical, oracle, noisy_oracle:error_rate=E,unsure_rate=U, mllm:MODEL)",
    "agent.fusion": "how per-view answers become a decision: attr_majority (reported, adaptive stop), majority, "
    "veto (one contradicted attribute = No), evidential (calibrated probability; YES / NO / UNDECIDED at "
    "agent.evidence.accept / reject); a goal may override it",
    "agent.nbv": "next-best-view strategy: farthest (angular FPS), random (seeded), llm (needs a language model), "
    "uncertainty (the view expected to move the evidential probability most); a goal may override it",
    "verifier.noise.seed": "seed of the noisy oracle's per-answer draws",
}

#: Leaf names of classical knobs that are shares, scores or ratios in [0, 1] (the naming convention there).
_UNIT_INTERVAL = re.compile(r"(share|support|dominant|fraction|score|ratio|confidence|fill|span|merge|rate)$")
#: Classical knobs with another natural range.
_CLASSICAL_RANGES: dict[str, tuple[float, float]] = {
    "exposure_target": (0.0, 255.0),
    "exposure_percentile": (0.0, 100.0),
    "box_max_roundness": (-1.0, 1.0),  # category.outline_roundness: ellipse fit minus polygon fit
}


@functools.cache
def _parameter_specs() -> tuple[ParameterSpec, ...]:
    from aiv_models.local_weights import DTYPES

    from .agent.factory import VERIFIER_BACKENDS
    from .agent.settings import AGENT_KINDS, DECISION_MODES, MODEL_OUTAGE_POLICIES, AgentSettings
    from .core.fusion import fusion_names
    from .core.nbv import available_nbv_strategies
    from .core.stopping import available_stop_rules
    from .model_config import (
        DETECTOR_BACKENDS,
        EMBEDDING_AGGREGATIONS,
        EMBEDDING_STOP_RULES,
        LANGUAGE_MODEL_TRANSPORTS,
        DetectorParams,
        EmbeddingParams,
        LanguageModelParams,
        MllmVerifierParams,
        TrainedAgentParams,
    )
    from .query.config import BACKENDS as QUERY_BACKENDS
    from .query.config import QueryConfig
    from .query.llm import CATEGORY_MATCH_POLICIES
    from .verification.classical.backend import ClassicalParams
    from .verification.classical.ocr import ENGINE_CHOICES
    from .verification.oracle import NoiseModel

    choices: dict[str, tuple[str, ...]] = {
        "agent.fusion": tuple(fusion_names()),
        "agent.nbv": tuple(available_nbv_strategies()),
        "agent.decision_mode": tuple(DECISION_MODES),
        "agent.stop_rule": available_stop_rules(),
        "verifier.backend": tuple(VERIFIER_BACKENDS),
        "query.backend": tuple(QUERY_BACKENDS),
        "query.category_match": tuple(CATEGORY_MATCH_POLICIES),
        "verifier.classical.ocr_engine": tuple(ENGINE_CHOICES),
        "agent.kind": AGENT_KINDS,
        "agent.model_outage": MODEL_OUTAGE_POLICIES,
        "detector.backend": DETECTOR_BACKENDS,
        "detector.dtype": DTYPES,
        "embedding.dtype": DTYPES,
        "embedding.aggregation": EMBEDDING_AGGREGATIONS,
        "embedding.stop_rule": EMBEDDING_STOP_RULES,
        "language_model.transport": LANGUAGE_MODEL_TRANSPORTS,
        "language_model.dtype": DTYPES,
    }
    ranges: dict[str, tuple[float | None, float | None]] = {
        "verifier.noise.error_rate": (0.0, 1.0),
        "agent.evidence.accept": (0.0, 1.0),
        "agent.evidence.reject": (0.0, 1.0),
        "agent.evidence.target_share": (0.0, 1.0),
        "verifier.noise.unsure_rate": (0.0, 1.0),
        "query.max_attrs": (1, None),
        "detector.box_threshold": (0.0, 1.0),
        "detector.text_threshold": (0.0, 1.0),
        "detector.max_batch": (1, 256),
        "detector.batch_window_s": (0.0, 1.0),
        "embedding.max_batch": (1, 256),
        "embedding.batch_window_s": (0.0, 1.0),
        "embedding.stop_margin": (0.0, None),
        "language_model.connect_timeout_s": (0.0, None),
        "language_model.read_timeout_s": (0.0, None),
        "language_model.retries": (0, 10),
        "language_model.max_new_tokens": (1, None),
        "language_model.max_concurrency": (1, 256),
        "language_model.max_batch": (1, 256),
        "language_model.batch_window_s": (0.0, 1.0),
    }
    sources: dict[str, tuple[type, str, Any]] = {}
    sources.update(_field_sources(AgentSettings(), "agent"))
    sources["verifier.backend"] = (object, "backend", "classical")
    sources["verifier.dataset_root"] = (object, "dataset_root", "")
    sources["verifier.calibration_file"] = (object, "calibration_file", "")
    sources["verifier.calibration_key"] = (object, "calibration_key", "")
    sources.update(_field_sources(NoiseModel(), "verifier.noise"))
    sources.update(_field_sources(ClassicalParams(), "verifier.classical"))
    sources.update(_field_sources(MllmVerifierParams(), "verifier.mllm"))
    sources.update(_field_sources(QueryConfig(), "query"))
    sources.update(_field_sources(DetectorParams(), "detector"))
    sources.update(_field_sources(EmbeddingParams(), "embedding"))
    sources.update(_field_sources(LanguageModelParams(), "language_model"))
    sources.update(_field_sources(TrainedAgentParams(), "trained"))

    defaults = _parameter_defaults()
    assert list(sources) == list(defaults), "parameter specs and defaults must list the same names"
    specs = []
    for name, default in defaults.items():
        owner, field_name, value = sources[name]
        documented = _documented_field(owner, field_name)
        if documented is not None:  # declared with aiv_common.setting_fields.setting: it says everything
            specs.append(parameter_spec(name, documented, default))
            continue
        description = (
            _DESCRIPTIONS.get(name)
            or _field_descriptions(owner).get(field_name)
            or (f"{owner.__name__}.{field_name} (see that class's docstring)")
        )
        minimum, maximum = ranges.get(name, _classical_range(name, default))
        specs.append(
            ParameterSpec(
                name,
                default,
                description,
                choices=choices.get(name) or _enum_choices(value),
                minimum=minimum,
                maximum=maximum,
            )
        )
    return tuple(specs)


def _field_sources(instance: Any, prefix: str) -> dict[str, tuple[type, str, Any]]:
    """``{dotted name: (owning class, field name, value)}`` for the fields :func:`flatten_defaults` keeps."""
    sources: dict[str, tuple[type, str, Any]] = {}
    for field in dataclasses.fields(instance):
        value = getattr(instance, field.name)
        name = f"{prefix}.{field.name}"
        if dataclasses.is_dataclass(value):
            sources.update(_field_sources(value, name))
        elif isinstance(value, (Enum, *SCALARS)):
            sources[name] = (type(instance), field.name, value)
    return sources


def _documented_field(owner: type, field_name: str) -> dataclasses.Field[Any] | None:
    """The field ``owner.field_name`` if it was declared with ``setting(...)``, else None."""
    if not dataclasses.is_dataclass(owner):
        return None
    for field in dataclasses.fields(owner):
        if field.name == field_name and setting_doc(field) is not None:
            return field
    return None


def _enum_choices(value: Any) -> tuple[str, ...]:
    return tuple(str(member.value) for member in type(value)) if isinstance(value, Enum) else ()


def _classical_range(name: str, default: Any) -> tuple[float | None, float | None]:
    """Ranges of the classical verifier's thresholds, from their naming convention (none for other knobs)."""
    if not name.startswith("verifier.classical.") or isinstance(default, (bool, str)):
        return None, None
    leaf = name.rsplit(".", 1)[-1]
    if leaf in _CLASSICAL_RANGES:
        return _CLASSICAL_RANGES[leaf]
    if _UNIT_INTERVAL.search(leaf):
        return 0.0, 1.0
    return (0 if isinstance(default, int) else 0.0), None


@functools.cache
def _field_descriptions(cls: type) -> dict[str, str]:
    """What a dataclass says about each field: metadata, attribute docstring, or its class docstring entry."""
    if not dataclasses.is_dataclass(cls):
        return {}
    names = [field.name for field in dataclasses.fields(cls)]
    found = _docstring_entries(inspect.cleandoc(cls.__doc__ or ""), names)
    found.update(_attribute_docstrings(cls))
    for field in dataclasses.fields(cls):
        if field.metadata.get("description"):
            found[field.name] = str(field.metadata["description"])
    return {name: _plain(text) for name, text in found.items()}


def _attribute_docstrings(cls: type) -> dict[str, str]:
    """Docstrings written right under a field (``x: int = 1`` then ``\"\"\"text\"\"\"``)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    except (OSError, TypeError, SyntaxError):
        return {}
    body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
    found: dict[str, str] = {}
    for statement, following in itertools.pairwise(body):
        if (
            isinstance(statement, ast.AnnAssign)
            and isinstance(statement.target, ast.Name)
            and isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            found[statement.target.id] = following.value.value
    return found


def _docstring_entries(doc: str, names: list[str]) -> dict[str, str]:
    """Per-field text of a class docstring: numpy-style entries (a line naming fields, indented text under
    it), else the clause that mentions ````field````."""
    found: dict[str, str] = {}
    lines = doc.splitlines()
    for index, line in enumerate(lines):
        listed = [part.strip() for part in line.split(",")]
        if line[:1].isspace() or not all(part in names for part in listed):
            continue
        text = []
        for following in lines[index + 1 :]:
            if following and not following[:1].isspace():
                break
            text.append(following.strip())
        if any(text):
            for name in listed:
                found[name] = " ".join(text)
    clauses = [
        clause
        for sentence in re.split(r"(?<=\.)\s+(?=[A-Z`])", " ".join(doc.split()))
        for clause in sentence.split("; ")
    ]
    for name in names:
        mentioned = [clause for clause in clauses if f"``{name}``" in clause]
        if name not in found and mentioned:
            found[name] = mentioned[0]
    return found


def _plain(text: str) -> str:
    """Docstring markup (````x````, :func:`x`) as plain text, on one line."""
    text = re.sub(r":\w+:`~?([^`]+)`", r"\1", text).replace("``", "")
    return " ".join(text.split()).rstrip(".")
