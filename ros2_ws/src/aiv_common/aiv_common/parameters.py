"""Declare a node's parameter table on an rclpy node, with descriptors, refusing anything it does not know.

Why a helper instead of ``declare_parameter`` calls: a plain declaration ignores a misspelt key in a params
file, ends a wrong type in a traceback, and accepts ``ros2 param set`` for a value the node read once at
start-up. Here every parameter gets a ``ParameterDescriptor`` (description, accepted choices, numeric range,
read-only), every value given on the command line or in a params file is checked by the same
:class:`~aiv_common.parameter_spec.ParameterSpec` that ``aiv-eval`` uses, and a key that matches no declared
parameter is refused. A parameter whose name ends in one of :data:`ROS_NAME_SUFFIXES` holds a topic, service,
action or node name; a value rclpy would refuse only when the node creates that entity (a traceback, far
from the parameter) is refused at declaration instead. All refusals are one-line
:class:`~aiv_common.parameter_spec.ParameterError`\\ s.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

import rclpy
from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor
from rclpy.exceptions import NameValidationException, ParameterException
from rclpy.expand_topic_name import expand_topic_name
from rclpy.node import Node
from rclpy.validate_full_topic_name import validate_full_topic_name

from .parameter_spec import ParameterError, ParameterSpec, Scalar, table_by_name, unknown_parameter_message

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
#: Parameters named ``*_topic``, ``*_service``, ``*_action`` or ``*_node`` hold ROS names (empty: not used).
ROS_NAME_SUFFIXES = ("_topic", "_service", "_action", "_node")
_RCL_SOURCE_SUFFIX = re.compile(r", at \S+:\d+$")


def descriptor(spec: ParameterSpec) -> ParameterDescriptor:
    """The ROS descriptor of a spec (what ``ros2 param describe`` shows)."""
    text = spec.description.strip()
    if spec.choices or spec.minimum is not None or spec.maximum is not None:
        text = f"{text} [{spec.accepted()}]"
    result = ParameterDescriptor(
        description=text,
        read_only=spec.read_only,
        additional_constraints=spec.accepted(),
    )
    if spec.type_name == "integer" and (spec.minimum is not None or spec.maximum is not None):
        low = INT64_MIN if spec.minimum is None else int(spec.minimum) + int(spec.exclusive_minimum)
        high = INT64_MAX if spec.maximum is None else int(spec.maximum)
        result.integer_range = [IntegerRange(from_value=low, to_value=high, step=0)]
    elif spec.type_name == "double" and (spec.minimum is not None or spec.maximum is not None):
        # ROS ranges are inclusive; a strict lower bound is enforced by the spec at start-up (the parameter
        # is read-only afterwards), the descriptor shows the bound itself.
        lowest = -math.inf if spec.minimum is None else float(spec.minimum)
        highest = math.inf if spec.maximum is None else float(spec.maximum)
        result.floating_point_range = [FloatingPointRange(from_value=lowest, to_value=highest, step=0.0)]
    return result


def given_parameters(node: Node) -> dict[str, Any]:
    """The values given to ``node`` at construction (params files, ``-p``, ``parameter_overrides``).

    rclpy keeps them in ``Node._parameter_overrides`` and has no public accessor (its only public use is
    ``automatically_declare_parameters_from_overrides``, which would declare every typo), so it is read here,
    in one place.
    """
    overrides: Mapping[str, Any] = getattr(node, "_parameter_overrides", {})
    return {name: parameter.value for name, parameter in overrides.items()}


def declare_parameter_table(node: Node, table: Iterable[ParameterSpec]) -> dict[str, Scalar]:
    """Declare every spec on ``node`` and return ``{name: value}``; refuse bad values and unknown keys.

    Call it once per node with the node's whole table: any given key that the table (or rclpy itself, e.g.
    ``use_sim_time``) does not declare is refused, which is what makes a misspelt key an error.
    """
    specs = table_by_name(table)
    values = declare_specs(node, specs.values())
    refuse_unknown_parameters(node, specs)
    return values


def declare_specs(node: Node, table: Iterable[ParameterSpec]) -> dict[str, Scalar]:
    """Declare ``table`` on ``node`` with descriptors and checked values (no check for unknown keys).

    A given value is checked by its spec before it is declared (so the message is ours, one line, and an
    integer for a double is accepted like in ``aiv-eval``); the checked value is then declared with
    ``ignore_override`` so rclpy does not read the raw override a second time.
    """
    given = given_parameters(node)
    values: dict[str, Scalar] = {}
    for spec in table:
        value = spec.check(given[spec.name]) if spec.name in given else spec.default
        if isinstance(value, str) and value and spec.name.endswith(ROS_NAME_SUFFIXES):
            problem = ros_name_problem(node, value)
            if problem is not None:
                raise ParameterError(
                    f"parameter {spec.name!r} = {value!r}; expected a valid ROS name: {problem}"
                )
        try:
            node.declare_parameter(spec.name, value, descriptor(spec), ignore_override=True)
        except ParameterException as error:  # a check of rclpy's own that the spec did not make
            raise ParameterError(f"parameter {spec.name!r} = {value!r}: {_first_line(error)}") from error
        values[spec.name] = value
    return values


def ros_name_problem(node: Node, name: str) -> str | None:
    """Why rclpy would refuse ``name`` as a topic, service, action or node name on ``node``; None if it is valid.

    The name is expanded as rclpy expands it (``~``, ``{node}``, the node's namespace), then validated.
    """
    try:
        validate_full_topic_name(expand_topic_name(name, node.get_name(), node.get_namespace()))
    except (NameValidationException, ValueError) as error:
        # rcl's text: "topic name 'x y' is invalid: <why>, at <file>:<line>"; rclpy's: "Invalid topic name: <why>:"
        text = _first_line(error).split(" is invalid: ", 1)[-1]
        text = _RCL_SOURCE_SUFFIX.sub("", text)
        if text.startswith("Invalid "):
            text = text.split(": ", 1)[-1]
        return text.rstrip(":").strip() or "rejected by rcl"
    return None


def refuse_unknown_parameters(node: Node, known: Iterable[str]) -> None:
    """ParameterError if a value was given for a name ``node`` has not declared (``known`` feeds the hint)."""
    unknown = sorted(name for name in given_parameters(node) if not node.has_parameter(name))
    if unknown:
        shown = f"{unknown[0]!r} given to {node.get_fully_qualified_name()}"
        more = f" ({len(unknown) - 1} more unknown: {', '.join(unknown[1:])})" if len(unknown) > 1 else ""
        raise ParameterError(unknown_parameter_message(unknown[0], known, shown) + more)


def init_or_report(program: str, args: list[str] | None, **init_kwargs: Any) -> bool:
    """``rclpy.init``; False after one line on stderr when the command line cannot be parsed.

    rcl reads ``--params-file`` and ``-p`` while initialising, so an unreadable or malformed params file ends
    here, as a traceback unless caught. The caller exits with code 2, as for any other bad parameter.
    """
    try:
        rclpy.init(args=args, **init_kwargs)
    except RuntimeError as error:  # rclpy's RCLError, whose class is not public
        text = _first_line(error).removeprefix("failed to initialize rcl: ")
        print(f"{program}: bad command line or params file: {text}", file=sys.stderr)
        return False
    return True


NodeT = TypeVar("NodeT", bound=Node)


def start_node(
    program: str,
    make_node: Callable[[], NodeT],
    args: list[str] | None,
    *,
    config_errors: tuple[type[Exception], ...] = (),
    **init_kwargs: Any,
) -> NodeT | None:
    """``rclpy.init`` and the node, or None after one line on stderr: the caller exits with code 2.

    A node refuses bad configuration while it is built (a parameter it declares, or ``config_errors`` such as
    a dataset that does not load). Every node's ``main`` starts this way, so the one-line message and the
    exit code that ``aiv-eval`` reads as "do not restart" are the same for all of them.
    """
    if not init_or_report(program, args, **init_kwargs):
        return None
    refused: tuple[type[Exception], ...] = (ParameterError, *config_errors)
    try:
        return make_node()
    except refused as error:
        print(f"{program}: {error}", file=sys.stderr)
        rclpy.try_shutdown()
        return None


def _first_line(error: Exception) -> str:
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__
