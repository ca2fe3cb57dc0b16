"""Which category a benchmark run tells the agent: one rule, used by the in-process mode and the evaluator node.

The reference's trained agent (spec §7.1) is prompted with ``Category (must match): <query_object_category>``,
the ground-truth category of the described object from the index, so its numbers were measured with that
information. The port's agent gets a category only through the request's ``category_hint`` (the
``VerifyInstance`` goal field, ``play_episode(category_hint=...)`` in-process), which the query interpreter takes
as the category when it names one of the benchmark classes. The modular pipeline, on the other hand, predicts
the category from the descriptions in the reference (spec §5.2); a hint would change what is measured. So the
hint depends on the agent kind, and this function is the only place that decides it: both evaluation modes call
it with the agent's flat parameters (the spec's in-process, the verifier node's own over ROS) so that a ROS run
and an in-process run of one configuration send the same hint and write the same records.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aiv_dataset.index_records import PairRecord

#: Agent kinds that are told the index's query category in benchmark runs (as their reference was).
HINTED_KINDS = frozenset({"trained"})


def benchmark_category_hint(agent_flat: Mapping[str, Any], pair: PairRecord) -> str:
    """The ``category_hint`` of ``pair``'s request: the index's query category for the kinds in
    :data:`HINTED_KINDS`, "" (the agent predicts it) for every other kind."""
    kind = str(agent_flat.get("agent.kind", "pipeline"))
    return pair.query_object_category if kind in HINTED_KINDS else ""


__all__ = ["HINTED_KINDS", "benchmark_category_hint"]
