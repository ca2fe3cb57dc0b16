"""Query understanding: category prediction and the attributes a verifier will check (spec §5.1-5.3).

Entry point: :func:`build_query_interpreter` (config → :class:`StandardQueryInterpreter`, which implements
:class:`QueryInterpreter`). Pieces: :mod:`.categories` (keyword classifier), :mod:`.rules` (weight-free
decomposer), :mod:`.llm` (prompts and answer parsing), :mod:`.caches` (benchmark cache files).
"""

from .caches import QueryCaches, derived_key
from .categories import KeywordCategoryClassifier
from .config import QueryConfig
from .factory import build_query_interpreter
from .interpreter import StandardQueryInterpreter
from .rules import RuleBasedDecomposer
from .types import QueryInterpreter, QueryMode, QuerySpec

__all__ = [
    "KeywordCategoryClassifier",
    "QueryCaches",
    "QueryConfig",
    "QueryInterpreter",
    "QueryMode",
    "QuerySpec",
    "RuleBasedDecomposer",
    "StandardQueryInterpreter",
    "build_query_interpreter",
    "derived_key",
]
