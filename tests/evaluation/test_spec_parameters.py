"""Parameters that cannot mislead, without ROS: the nodes' parameter tables, the YAML files that list them, and
``aiv-eval``'s evaluation spec, which is checked against those same tables.

Every case here used to run with defaults or diverge between the in-process and the ROS mode; now each is either
accepted the same way in both modes or refused with one line and exit code 2.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from aiv_common.parameter_spec import (
    ParameterError,
    ParameterSpec,
    check_values,
    flatten_parameters,
    parameter_defaults,
)
from aiv_eval.cli import main as aiv_eval
from aiv_eval.run.evaluator_parameters import EVALUATOR_PARAMETERS
from aiv_eval.run.spec import EVALUATOR_DEFAULTS, SIM_DEFAULTS, EvalSpec, SpecError, node_table
from aiv_offline_sim.offline_sim_parameters import SIM_PARAMETERS
from aiv_verifier.verifier_parameters import config_parameter_defaults, verifier_parameters

SRC = Path(__file__).resolve().parents[2] / "ros2_ws" / "src"
NODE_YAMLS = {
    "offline_sim": SRC / "aiv_offline_sim" / "config" / "offline_sim.yaml",
    "verifier": SRC / "aiv_verifier" / "config" / "verifier.yaml",
}
OFFLINE_EVAL = SRC / "aiv_verifier" / "config" / "offline_eval.yaml"

DOTTED = """
offline_sim:
  ros__parameters:
    index_file: val/pv_index_all.jsonl
verifier:
  ros__parameters:
    agent.nbv: random
    verifier.classical.region.min_fraction: 0.1
"""
NESTED = """
/**/offline_sim:
  ros__parameters:
    index_file: val/pv_index_all.jsonl
/**/verifier:
  ros__parameters:
    agent:
      nbv: random
    verifier:
      classical:
        region: {min_fraction: 0.1}
"""


def _params(tmp_path: Path, text: str, name: str = "params.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _section(path: Path, node: str) -> dict:
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    (key,) = [key for key in document if key.rsplit("/", 1)[-1] == node]
    return flatten_parameters(document[key]["ros__parameters"])


# -- one parameter's rules --------------------------------------------------------------------------------------


def test_a_spec_accepts_its_type_and_says_what_it_accepts_otherwise() -> None:
    steps = ParameterSpec("max_steps", 6, "budget", minimum=1)
    timeout = ParameterSpec("timeout_s", 5.0, "wait", minimum=0.0, exclusive_minimum=True)
    mode = ParameterSpec("mode", "a", "mode", choices=("a", "b"))
    assert steps.check(3) == 3 and timeout.check(2) == 2.0 and isinstance(timeout.check(2), float)
    assert ParameterSpec("name", "", "a name").check(2024) == "2024"  # `--set run_name=2024` is a name
    for spec, value, message in (
        (steps, "abc", "parameter 'max_steps' = 'abc' (a string); expected an integer >= 1"),
        (steps, 0, "parameter 'max_steps' = 0; expected an integer >= 1"),
        (steps, True, "parameter 'max_steps' = True (a bool); expected an integer >= 1"),
        (steps, 2.0, "parameter 'max_steps' = 2.0 (a double); expected an integer >= 1"),
        (timeout, 0.0, "parameter 'timeout_s' = 0.0; expected a number > 0.0"),
        (timeout, "abc", "parameter 'timeout_s' = 'abc' (a string); expected a number > 0.0"),
        (mode, "c", "parameter 'mode' = 'c'; expected one of a, b"),
        (mode, None, "parameter 'mode' = nothing (no value); expected one of a, b"),
        (ParameterSpec("flag", False, "f"), 1, "parameter 'flag' = 1 (an integer); expected true or false"),
    ):
        with pytest.raises(ParameterError) as caught:
            spec.check(value)
        assert str(caught.value) == message


def test_a_table_refuses_unknown_names_with_the_nearest_one() -> None:
    with pytest.raises(ParameterError, match=r"^unknown parameter 'agent\.nvb'; did you mean agent\.nbv\?$"):
        check_values(verifier_parameters(), {"agent.nvb": "random"})
    with pytest.raises(ParameterError, match=r"^unknown parameter 'zzz'; known: .*run_dir"):
        check_values(EVALUATOR_PARAMETERS, {"zzz": 1})


def test_every_declared_default_is_valid_and_every_parameter_is_described_and_read_only() -> None:
    for node in ("offline_sim", "verifier", "evaluator"):
        table = node_table(node)
        assert check_values(table, parameter_defaults(table)) == parameter_defaults(table)
        for spec in table:
            assert spec.description.strip() and spec.read_only, f"{node}: {spec.name}"
    choices = {spec.name: spec.choices for spec in verifier_parameters()}
    assert choices["agent.nbv"] == ("farthest", "llm", "random", "uncertainty")
    assert choices["agent.fusion"] == ("attr_majority", "majority", "veto", "evidential")
    assert choices["agent.query_mode"] == ("attribute", "direct", "merged")
    assert choices["frame_qos.reliability"] == ("reliable", "best_effort")
    assert [spec.name for spec in verifier_parameters()][: len(config_parameter_defaults())] == list(
        config_parameter_defaults()
    )


def test_flattening_is_what_ros_does_with_nested_sections() -> None:
    assert flatten_parameters({"agent": {"nbv": "x"}, "frame_qos.depth": 1}) == {
        "agent.nbv": "x",
        "frame_qos.depth": 1,
    }
    with pytest.raises(ParameterError, match="'agent' is an empty mapping"):
        flatten_parameters({"agent": {}})


# -- the YAML files -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("node", sorted(NODE_YAMLS))
def test_each_node_yaml_lists_every_declared_parameter_at_its_default(node: str) -> None:
    listed = _section(NODE_YAMLS[node], node)
    defaults = parameter_defaults(node_table(node))
    assert list(listed) == [name for name in listed if name in defaults], "undeclared names in the YAML"
    assert sorted(listed) == sorted(defaults), "the YAML must list every declared parameter"
    for name, value in listed.items():
        assert value == defaults[name] and type(value) is type(defaults[name]), name


def test_every_key_of_offline_eval_yaml_is_declared_with_a_valid_value() -> None:
    document = yaml.safe_load(OFFLINE_EVAL.read_text(encoding="utf-8"))
    assert sorted(document) == ["/**/evaluator", "/**/offline_sim", "/**/verifier"]
    for node in ("offline_sim", "verifier", "evaluator"):
        check_values(node_table(node), _section(OFFLINE_EVAL, node))  # raises on an unknown key or value
    EvalSpec.load(OFFLINE_EVAL)


# -- the evaluation spec: the same tables, the same flattening, one line ---------------------------------------


def test_spec_defaults_are_the_node_tables() -> None:
    assert parameter_defaults(EVALUATOR_PARAMETERS) == EVALUATOR_DEFAULTS
    # The one deliberate difference: an evaluation publishes the ground truth its default agent needs.
    assert {**parameter_defaults(SIM_PARAMETERS), "privileged_output": True} == SIM_DEFAULTS


def test_nested_and_dotted_params_files_are_the_same_configuration(tmp_path: Path) -> None:
    dotted = EvalSpec.load(_params(tmp_path, DOTTED, "dotted.yaml"))
    nested = EvalSpec.load(_params(tmp_path, NESTED, "nested.yaml"))
    assert (
        nested.verifier
        == dotted.verifier
        == {"agent.nbv": "random", "verifier.classical.region.min_fraction": 0.1}
    )
    assert nested.agent_config() == dotted.agent_config()
    assert nested.agent_config()["agent"]["nbv"] == "random"
    assert nested.fingerprint_config() == dotted.fingerprint_config()
    # The ROS mode hands the nodes what the in-process mode uses, under keys that match any namespace.
    written = tmp_path / "written.yaml"
    nested.write(written)
    document = yaml.safe_load(written.read_text(encoding="utf-8"))
    assert sorted(document) == ["/**/evaluator", "/**/offline_sim", "/**/verifier"]
    assert document["/**/verifier"]["ros__parameters"] == nested.verifier
    assert EvalSpec.load(written).fingerprint_config() == nested.fingerprint_config()


def test_valid_node_parameters_that_are_no_agent_knob_are_accepted(tmp_path: Path) -> None:
    params = _params(tmp_path, DOTTED)
    spec = EvalSpec.load(
        params, ["offline_sim.frame_id=cam", "verifier.frame_timeout_s=2", "verifier.frame_qos.depth=3"]
    )
    assert spec.sim["frame_id"] == "cam"
    assert spec.verifier["frame_timeout_s"] == 2.0 and isinstance(spec.verifier["frame_timeout_s"], float)


@pytest.mark.parametrize(
    ("override", "message"),
    [
        (
            "verifier.agent.nvb=random",
            "override 'verifier.agent.nvb=random': unknown parameter verifier.agent.nvb; did you mean agent.nbv?",
        ),
        (
            "verifier.frame_timeout=2",
            "override 'verifier.frame_timeout=2': unknown parameter verifier.frame_timeout; "
            "did you mean frame_timeout_s?",
        ),
        (
            "offline_sim.sped=3",
            "override 'offline_sim.sped=3': unknown parameter offline_sim.sped; did you mean seed?",
        ),
        (
            "evaluator.run_dri=x",
            "override 'evaluator.run_dri=x': unknown parameter evaluator.run_dri; did you mean run_dir?",
        ),
        (
            "offline_sim.max_steps=abc",
            "override 'offline_sim.max_steps=abc': offline_sim parameter 'max_steps' = 'abc' (a string); "
            "expected an integer >= 1",
        ),
        (
            "verifier.frame_cache_size=0",
            "override 'verifier.frame_cache_size=0': verifier parameter 'frame_cache_size' = 0; "
            "expected an integer >= 1",
        ),
        (
            "verifier.frame_qos.reliability=sometimes",
            "override 'verifier.frame_qos.reliability=sometimes': verifier parameter 'frame_qos.reliability' = "
            "'sometimes'; expected one of reliable, best_effort",
        ),
        (
            "verifier.frame_timeout_s=abc",
            "override 'verifier.frame_timeout_s=abc': verifier parameter 'frame_timeout_s' = 'abc' (a string); "
            "expected a number > 0.0",
        ),
        (
            "verifier.agent.nbv=rand",
            "override 'verifier.agent.nbv=rand': verifier parameter 'agent.nbv' = 'rand'; "
            "expected one of farthest, llm, random, uncertainty",
        ),
        (
            "evaluator.max_attempts=0",
            "override 'evaluator.max_attempts=0': evaluator parameter 'max_attempts' = 0; expected an integer >= 1",
        ),
    ],
)
def test_misleading_overrides_end_in_one_line_and_exit_code_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], override: str, message: str
) -> None:
    params = _params(tmp_path, DOTTED)
    with pytest.raises(SpecError) as caught:
        EvalSpec.load(params, [override])
    assert str(caught.value) == message
    code = aiv_eval(["run", str(params), "--mode", "inprocess", "--set", override])
    err = capsys.readouterr().err
    assert code == 2 and err.strip().splitlines() == [err.strip()] and err.strip().endswith(message)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("offline_sim:\n  ros__parameters:\n    sped: 3\n", "unknown parameter offline_sim.sped"),
        ("verifier:\n  ros__parameters:\n    agent: {nvb: random}\n", "unknown parameter verifier.agent.nvb"),
        ("evaluator:\n  ros__parameters:\n    max_attempts: 0\n", "parameter 'max_attempts' = 0"),
        ("/**/simulator:\n  ros__parameters: {}\n", "unknown node section '/**/simulator'"),
        (
            "verifier:\n  ros__parameters:\n    default_step_budget: 30\n",
            "verifier parameter 'default_step_budget' = 30; expected at most max_step_budget (24)",
        ),
        (
            "offline_sim:\n  ros__parameters:\n    frame_qos: {depth: 0}\n",
            "offline_sim parameter 'frame_qos.depth' = 0; keep_last needs depth >= 1",
        ),
        ("offline_sim:\n  ros__parameters:\n    max_steps: [1\n", "cannot read params file"),
    ],
)
def test_bad_params_files_end_in_one_line(tmp_path: Path, text: str, fragment: str) -> None:
    params = _params(tmp_path, text)
    with pytest.raises(SpecError) as caught:
        EvalSpec.load(params)
    assert fragment in str(caught.value) and "\n" not in str(caught.value)


def test_plain_rooted_and_wildcard_section_keys_are_read_alike(tmp_path: Path) -> None:
    specs = [
        EvalSpec.load(_params(tmp_path, f"{key}:\n  ros__parameters:\n    max_steps: 3\n", f"{index}.yaml"))
        for index, key in enumerate(("offline_sim", "/offline_sim", "/**/offline_sim"))
    ]
    assert [spec.sim["max_steps"] for spec in specs] == [3, 3, 3]
