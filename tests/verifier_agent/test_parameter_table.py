"""The verifier's parameter table, now derived from its settings dataclasses, is the one of commit 5151136.

The fixture was written from that commit's hand-kept tables (``aiv_verifier/parameters.py`` and
``config_schema.py``): every name, type, default, choice and bound must be unchanged, so a params file that
worked before still works and means the same. Descriptions may be reworded and are not compared. The classical
backend's knobs are left out (they move to the checks package, which keeps its own record).
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest
from aiv_common.setting_fields import setting
from aiv_common.setting_tree import dataclass_from_mapping, flatten_defaults, nested_config, setting_specs
from aiv_verifier.detector_parameters import detector_node_parameters
from aiv_verifier.verifier_parameters import (
    VerifierConfig,
    config_parameter_defaults,
    factory_config,
    node_settings,
    verifier_parameters,
)

FIXTURE = Path(__file__).parent / "fixtures" / "parameter_table_5151136.json"
#: Parameters added after the baseline (each one new, so no params file that worked before changes meaning).
ADDED_SINCE_BASELINE = frozenset({"height_levels"})
CLASSICAL = "verifier.classical."


def _rows(table) -> list[dict]:
    return [
        {
            "name": spec.name,
            "type": spec.type_name,
            "default": spec.default,
            "choices": list(spec.choices),
            "minimum": spec.minimum,
            "maximum": spec.maximum,
            "exclusive_minimum": spec.exclusive_minimum,
            "read_only": spec.read_only,
        }
        for spec in table
        if not spec.name.startswith(CLASSICAL)
    ]


@pytest.mark.parametrize(
    ("node", "table"), [("verifier", verifier_parameters), ("detector_node", detector_node_parameters)]
)
def test_table_equals_the_baseline(node: str, table) -> None:
    expected = json.loads(FIXTURE.read_text(encoding="utf-8"))[node]
    actual = [row for row in _rows(table()) if row["name"] not in ADDED_SINCE_BASELINE]
    assert [row["name"] for row in actual] == [row["name"] for row in expected]
    for want, got in zip(expected, actual, strict=True):
        assert got == want, want["name"]
        assert type(got["default"]) is type(want["default"]), want["name"]


def test_every_knob_describes_itself() -> None:
    """Every agent and backend knob, the classical checks' included, is a field declared with setting(...):
    setting_specs refuses any other, so each has its own words and no text is read from source."""
    specs = setting_specs(VerifierConfig())
    assert [spec.name for spec in specs] == list(config_parameter_defaults())
    assert any(spec.name.startswith(CLASSICAL) for spec in specs)
    for spec in verifier_parameters():
        assert spec.description.strip(), spec.name


def test_defaults_specs_and_factory_mapping_come_from_one_tree() -> None:
    defaults = config_parameter_defaults()
    assert defaults == flatten_defaults(VerifierConfig())
    assert list(defaults) == [spec.name for spec in verifier_parameters()][: len(defaults)]
    nested = factory_config({"agent.nbv": "random", "image_topic": "elsewhere"})
    assert nested["agent"]["nbv"] == "random"
    assert "image_topic" not in nested  # node wiring is no factory setting
    assert nested == nested_config({**defaults, "agent.nbv": "random"})


def test_node_settings_are_typed_and_cross_checked() -> None:
    values = {spec.name: spec.default for spec in verifier_parameters()}
    settings = node_settings({**values, "move_timeout_s": 3.0, "max_step_budget": 30})
    assert settings.wiring.move_timeout_s == 3.0
    assert settings.limits.max_step_budget == 30
    assert settings.frame_qos.durability == "transient_local"
    with pytest.raises(ValueError, match="default_step_budget"):
        node_settings({**values, "default_step_budget": 40})


def test_unknown_key_in_a_section_is_named() -> None:
    with pytest.raises(ValueError, match=r"agent\.evidence\.acept"):
        dataclass_from_mapping(VerifierConfig, {"agent": {"evidence": {"acept": 0.9}}}, "")


def test_an_undocumented_field_is_refused() -> None:
    @dataclasses.dataclass(frozen=True)
    class Knobs:
        documented: int = setting(1, "a documented knob", minimum=0)
        bare: float = 0.5

    with pytest.raises(TypeError, match="bare"):
        setting_specs(Knobs(), "knobs")


def test_importing_the_factory_does_not_import_the_configuration() -> None:
    """The factory builds from nested mappings; the configuration module imports it, never the reverse."""
    code = (
        "import sys, aiv_verifier.agent.factory\n"
        "loaded = [name for name in sys.modules if name.startswith('aiv_verifier.verifier_parameters')]\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
