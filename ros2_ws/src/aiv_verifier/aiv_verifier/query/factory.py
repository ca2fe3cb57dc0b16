"""One entry point the verifier node (and the in-process evaluator) use to build query understanding."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..core.types import LanguageModel
from .config import QueryConfig
from .interpreter import StandardQueryInterpreter


def build_query_interpreter(
    config: Mapping[str, Any] | QueryConfig | None = None, model: LanguageModel | None = None
) -> StandardQueryInterpreter:
    """Build a :class:`~aiv_verifier.query.types.QueryInterpreter` from a :class:`QueryConfig` or a mapping of
    its fields (e.g. ROS parameters: ``{"backend": "llm", "cache_dir": "/data/pv_dataset", ...}``).

    ``model`` is required for ``backend: llm`` and ignored otherwise. Errors that a user must fix (unknown
    keys, bad values, a missing prompt file, a malformed cache or description database) raise at once.
    """
    if config is None:
        resolved = QueryConfig()
    elif isinstance(config, QueryConfig):
        resolved = config
    else:
        resolved = QueryConfig.from_mapping(config)
    return StandardQueryInterpreter(resolved, model)
