"""The value types of the chat interface: one request, one result, and what a transport must provide.

A request is one user turn: zero or more images (shown first, as the reference's servers did), then the prompt
text, with an optional system message; decoding is always greedy. A result never raises: a failed call is an
empty ``text`` with ``error`` saying why, because the reference turns a failed call into an empty answer (then
"Missing"), and one bad call must never end an episode.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np


@dataclass(frozen=True, eq=False)
class ChatRequest:
    """One user turn. ``images`` are H×W×3 uint8 RGB arrays (H×W grey and H×W×4 RGBA are converted).

    ``max_new_tokens`` 0 means the model's configured default (``language_model.max_new_tokens``).
    """

    prompt: str
    images: tuple[np.ndarray, ...] = ()
    system: str = ""
    max_new_tokens: int = 0

    @classmethod
    def of(cls, prompt: str, images: Sequence[np.ndarray] = (), system: str = "") -> ChatRequest:
        return cls(prompt, tuple(images), system)


@dataclass(frozen=True)
class ChatResult:
    """The answer to one request: ``text`` ("" when the call failed), ``error`` ("" on success).

    ``attempts`` counts transport attempts (1 + retries used), ``seconds`` the wall time of the call,
    ``cached`` whether the answer came from the persistent cache.
    """

    text: str
    error: str = ""
    attempts: int = 1
    seconds: float = 0.0
    cached: bool = False

    @property
    def failed(self) -> bool:
        return bool(self.error)


@dataclass
class ChatStats:
    """Counters of one chat model since it was built (all transports, all callers)."""

    calls: int = 0
    failed: int = 0
    retries: int = 0
    cache_hits: int = 0
    seconds: float = 0.0
    last_error: str = ""
    errors: dict[str, int] = field(default_factory=dict)

    def as_record(self) -> dict[str, object]:
        return {
            "calls": self.calls,
            "failed": self.failed,
            "retries": self.retries,
            "cache_hits": self.cache_hits,
            "seconds": round(self.seconds, 6),
            "last_error": self.last_error,
            "errors": dict(sorted(self.errors.items())),
        }


class ChatTransport(Protocol):
    """How requests reach a model: in-process transformers or an OpenAI-compatible server.

    ``parallel`` says whether concurrent calls really run at the same time (a server batches them; an
    in-process model serialises them behind its lock). ``identity`` names what answers: a weights fingerprint,
    or server URL + model name; it keys the persistent cache and is recorded with a run. ``complete`` must not
    raise: failures come back as a result with ``error`` set.
    """

    @property
    def parallel(self) -> bool: ...

    @property
    def identity(self) -> Mapping[str, str]: ...

    def complete(self, request: ChatRequest, max_new_tokens: int) -> ChatResult: ...

    def close(self) -> None: ...
