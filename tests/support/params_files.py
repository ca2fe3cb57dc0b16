"""A ROS 2 params file read the way the tests need it: one flat parameter mapping per node name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from aiv_common.parameter_spec import flatten_parameters


def node_sections(path: Path) -> dict[str, dict[str, Any]]:
    """``{node: {dotted.name: value}}`` of a params file, keyed by the last segment of each section's node
    pattern (``/**/verifier`` -> ``verifier``)."""
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    return {
        key.rsplit("/", 1)[-1]: flatten_parameters(value["ros__parameters"])
        for key, value in document.items()
    }
