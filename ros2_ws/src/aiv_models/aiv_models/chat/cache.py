"""A persistent cache of chat answers, keyed by the model's identity and the exact request.

Greedy decoding makes an answer a function of (weights or served model, system text, prompt, images, answer
length), so a rerun or a parameter sweep need not pay for the same text-only calls twice (category prediction,
attribute extraction, merge; with ``include_images`` also LLM-NBV and per-view calls, keyed by a hash of the
pixels). Only successful answers are stored: a failed call is retried by the next run.

One small JSON file per entry under ``<dir>/<key[:2]>/<key>.json``, written to a temporary name and renamed, so
concurrent threads and processes (xdist workers, several verifier nodes) share a directory without locks: the
worst case is two processes computing the same answer once each. The file records the identity and a prompt
excerpt next to the answer, so a person can see what an entry is.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

from .images import pixel_digest
from .types import ChatRequest

CACHE_FORMAT = 1


class ChatCache:
    """Answers of one model identity in ``directory`` (created on first write)."""

    def __init__(
        self, directory: str | os.PathLike[str], identity: Mapping[str, str], *, include_images: bool = False
    ) -> None:
        self.directory = Path(directory).expanduser()
        self.identity = dict(sorted(identity.items()))
        self.include_images = include_images

    def accepts(self, request: ChatRequest) -> bool:
        """Whether this request's answer is cached (text-only always; image calls when ``include_images``)."""
        return self.include_images or not request.images

    def key(self, request: ChatRequest, max_new_tokens: int) -> str:
        material = {
            "format": CACHE_FORMAT,
            "identity": self.identity,
            "system": request.system,
            "prompt": request.prompt,
            "images": [pixel_digest(image) for image in request.images],
            "max_new_tokens": int(max_new_tokens),
        }
        canonical = json.dumps(material, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, request: ChatRequest, max_new_tokens: int) -> str | None:
        """The cached answer, or None (not cached, or an unreadable entry, which is then ignored)."""
        if not self.accepts(request):
            return None
        path = self._path(self.key(request, max_new_tokens))
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            return None
        text = entry.get("text") if isinstance(entry, dict) else None
        return text if isinstance(text, str) else None

    def put(self, request: ChatRequest, max_new_tokens: int, text: str) -> None:
        """Store an answer atomically; a full or read-only disk only costs the caching, never the call."""
        if not self.accepts(request):
            return
        key = self.key(request, max_new_tokens)
        path = self._path(key)
        entry = {
            "format": CACHE_FORMAT,
            "identity": self.identity,
            "prompt_head": request.prompt[:200],
            "images": len(request.images),
            "text": text,
        }
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            handle, scratch = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=path.parent)
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                json.dump(entry, stream, ensure_ascii=False)
            os.replace(scratch, path)
        except OSError:
            return
