"""The persistent cache of chat answers: text-only calls are paid once across model instances (a rerun, a sweep),
image calls only when asked, failures never, and another model identity never shares an entry."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from aiv_models.chat import ChatRequest, open_http_chat
from aiv_models.openai_server import Fault
from aiv_verifier.query import build_query_interpreter
from aiv_verifier.query.types import QueryMode
from support import offline_models
from support.llm_server import MODEL_NAME, routed, serving

no_network = offline_models.no_network  # fixture
pytestmark = pytest.mark.usefixtures("no_network")


def _answer(request: ChatRequest) -> str:
    return f"{request.prompt}/{len(request.images)}"


def test_text_calls_are_answered_from_the_cache_across_instances(tmp_path: Path) -> None:
    with serving(_answer) as server:
        first = open_http_chat(server.url, MODEL_NAME, cache_dir=tmp_path)
        assert first.generate("q") == "q/0" and first.generate("q") == "q/0"
        assert server.requests_served == 1 and first.stats().cache_hits == 1
        rerun = open_http_chat(server.url, MODEL_NAME, cache_dir=tmp_path)  # a new process, same directory
        assert rerun.complete(ChatRequest.of("q")).cached
        assert rerun.generate("q", []) == "q/0" and server.requests_served == 1
        assert rerun.complete(ChatRequest("q", max_new_tokens=5)).cached is False  # another answer length
        image = np.zeros((4, 4, 3), np.uint8)
        assert rerun.generate("q", [image]) == "q/1" and rerun.generate("q", [image]) == "q/1"
        assert server.requests_served == 4  # image calls are not cached by default


def test_image_calls_are_cached_by_pixels_when_asked(tmp_path: Path) -> None:
    with serving(_answer) as server:
        model = open_http_chat(server.url, MODEL_NAME, cache_dir=tmp_path, cache_image_calls=True)
        red = np.zeros((4, 4, 3), np.uint8)
        red[..., 0] = 200
        blue = red[..., ::-1].copy()
        for _ in range(2):
            assert model.generate("q", [red]) == "q/1" and model.generate("q", [blue]) == "q/1"
        assert server.requests_served == 2 and model.stats().cache_hits == 2


def test_failures_are_not_cached_and_identities_do_not_mix(tmp_path: Path) -> None:
    with serving(_answer) as server, serving(lambda request: "other server") as other:
        model = open_http_chat(server.url, MODEL_NAME, cache_dir=tmp_path, retries=0)
        server.inject(Fault("status", 500))
        assert model.generate("q") == ""
        assert model.generate("q") == "q/0" and server.requests_served == 2
        elsewhere = open_http_chat(other.url, MODEL_NAME, cache_dir=tmp_path)
        assert elsewhere.generate("q") == "other server"
        renamed = open_http_chat(server.url, "another-model", cache_dir=tmp_path, retries=0)
        assert renamed.complete(ChatRequest.of("q")).cached is False  # (and the server refuses the name)
    corrupt = next(tmp_path.rglob("*.json"))
    corrupt.write_text("{not json", encoding="utf-8")
    with serving(_answer) as server:  # a new port: a new identity, so only the format matters here
        assert open_http_chat(server.url, MODEL_NAME, cache_dir=tmp_path).generate("z") == "z/0"


def test_query_understanding_is_paid_once(tmp_path: Path) -> None:
    extract = '{"attributes": [{"name": "color", "type": "color", "weight": 3, "evidence_phrase": "red"}]}'
    answer = routed(_answer, {"category": "mug", "extract": extract, "merge": "a red mug"})
    descriptions = ("a red mug", "the red mug", "red mug")
    with serving(answer) as server:
        for _ in range(2):  # two runs of a sweep: two interpreters, two model instances, one cache
            model = open_http_chat(server.url, MODEL_NAME, cache_dir=tmp_path)
            interpreter = build_query_interpreter({"backend": "llm"}, model)
            query = interpreter.interpret(descriptions, QueryMode.ATTRIBUTE, "")
            assert query.category == "mug" and [a.evidence_phrase for a in query.attributes] == ["red"]
        assert server.requests_served == 2  # category + extraction, once
