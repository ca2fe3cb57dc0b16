"""The OpenAI-compatible test server (aiv_models.openai_server) wired for tests: the tiny VLM behind HTTP, and
answer functions that route the agent's text-only stages (category, extraction, navigation) to fixed answers
while verification prompts go to the real model.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from aiv_models.chat import ChatRequest
from aiv_models.openai_server import OpenAICompatibleServer, transformers_answer

Answer = Callable[[ChatRequest], str]
MODEL_NAME = "tiny-vlm"

#: Markers of the package's prompts (their first words), to route a request by the stage that sent it.
STAGE_MARKERS: Mapping[str, str] = {
    "category": "Decide what kind of object it is",
    "extract": "You build checklists",
    "merge": "Three people described",
    "navigation": "viewpoint planner",
    "verify": "You are checking, for a robot",
}


def stage_of(prompt: str) -> str:
    for stage, marker in STAGE_MARKERS.items():
        if marker in prompt:
            return stage
    return "unknown"


def tiny_vlm_answer(model_dir: Path) -> Answer:
    """The trained tiny VLM as an answer function (cpu, fp32; the image really reaches it)."""
    return transformers_answer(str(model_dir), device="cpu", dtype="float32", default_max_new_tokens=16)


def routed(verify: Answer, fixed: Mapping[str, str]) -> Answer:
    """Verification prompts to ``verify``; other stages answered with ``fixed[stage]`` (a KeyError: HTTP 500)."""

    def answer(request: ChatRequest) -> str:
        stage = stage_of(request.prompt)
        return verify(request) if stage == "verify" else fixed[stage]

    return answer


@contextmanager
def serving(answer: Answer, **options: Any) -> Iterator[OpenAICompatibleServer]:
    """A started server on 127.0.0.1 (stopped afterwards, stalled requests released)."""
    server = OpenAICompatibleServer(answer, model_name=options.pop("model_name", MODEL_NAME), **options)
    with server:
        yield server
