"""The MLLM per-view verifier on real transports: decisions follow the crop, concurrent calls decide exactly as
sequential ones and return in attribute order, the one-call-per-view option, and failed calls (→ Missing,
counted per episode)."""

from __future__ import annotations

import random
import threading
from pathlib import Path

import numpy as np
import pytest
from aiv_models.chat import ChatRequest, open_http_chat
from aiv_models.openai_server import Fault
from aiv_verifier.core.types import Attribute, Decision
from aiv_verifier.model_config import MllmVerifierParams
from aiv_verifier.verification.base import ViewInput
from aiv_verifier.verification.mllm import FAILED_KEY, MllmVerifier
from support import offline_models, tiny_vlm
from support.llm_server import MODEL_NAME, serving, tiny_vlm_answer
from support.tiny_vlm import scene

no_network = offline_models.no_network  # fixture
tiny_vlm_dir = tiny_vlm.tiny_vlm_dir  # fixture
pytestmark = [pytest.mark.usefixtures("no_network"), pytest.mark.slow]

ATTRIBUTES = (
    Attribute("color", "color", 3, "red"),
    Attribute("body_color", "color", 2, "blue"),
    Attribute("mug_color", "color", 2, "red"),
    Attribute("desc_1", "other", 2, "a blue mug"),
)
#: What the tiny VLM is asked in the colour tests: every prompt agrees with the query "a red mug" (as trained).
RED_QUERY = (
    Attribute("color", "color", 3, "red"),
    Attribute("mug_color", "color", 2, "red"),
    Attribute("desc_1", "other", 2, "a red mug"),
    Attribute("desc_3", "other", 2, "red mug"),
)


def _view(colour: str, seed: int = 0) -> ViewInput:
    crop = scene(random.Random(seed), colour, (128, 96))
    return ViewInput(crop, crop, None, 1.0, "mug", ("a red mug", "the red mug", "red mug"))


def _verifier(url: str, concurrency: int, **params: object) -> MllmVerifier:
    model = open_http_chat(url, MODEL_NAME, max_concurrency=concurrency, max_new_tokens=16)
    return MllmVerifier.from_params(MllmVerifierParams(**params), model)  # type: ignore[arg-type]


def test_decisions_follow_the_crop_and_concurrency_changes_nothing(tiny_vlm_dir: Path) -> None:
    with serving(tiny_vlm_answer(tiny_vlm_dir)) as server:
        concurrent = _verifier(server.url, 4)
        sequential = _verifier(server.url, 1)
        for seed in range(3):
            for colour, expected in (("red", Decision.YES), ("blue", Decision.NO)):
                view = _view(colour, seed)
                fast = concurrent.verify(view, RED_QUERY)
                slow = sequential.verify(view, RED_QUERY)
                assert [a.attribute for a in fast] == [a.name for a in RED_QUERY]
                assert [a.answer for a in fast] == [expected] * len(RED_QUERY), (colour, seed)
                assert [(a.answer, a.reason) for a in fast] == [(a.answer, a.reason) for a in slow]
        assert concurrent.model_calls == sequential.model_calls == 3 * 2 * len(RED_QUERY)
        assert concurrent.failed_calls == 0


def test_calls_of_one_view_run_concurrently_and_keep_attribute_order() -> None:
    barrier = threading.Barrier(len(ATTRIBUTES), timeout=30)

    def answer(request: ChatRequest) -> str:
        barrier.wait()  # returns only when every call of the view is in flight at once
        colour = "red" if "= red" in request.prompt else "other"
        return '{"answer": "Yes"}' if colour == "red" else '```json\n{"answer": "No", "reason": "blue"}\n```'

    with serving(answer) as server:
        answers = _verifier(server.url, 8).verify(_view("red"), ATTRIBUTES)
        assert server.peak_in_flight == len(ATTRIBUTES)
    assert [a.answer for a in answers] == [Decision.YES, Decision.NO, Decision.YES, Decision.NO]
    assert answers[1].reason == "blue" and "Description: a blue mug" in str(answers[3].debug["prompt"])


def test_one_call_per_view_asks_everything_at_once() -> None:
    prompts: list[str] = []

    def answer(request: ChatRequest) -> str:
        prompts.append(request.prompt)
        return '{"answers": {"color": {"answer": "Yes"}, "body_color": "No", "desc_1": {"answer": "Unsure"}}}'

    with serving(answer) as server:
        verifier = _verifier(server.url, 4, one_call_per_view=True)
        answers = verifier.verify(_view("red"), ATTRIBUTES)
    assert len(prompts) == 1 and verifier.model_calls == 1
    assert "color = red\nbody_color = blue\nmug_color = red\ndesc_1 = a blue mug" in prompts[0]
    assert [a.answer for a in answers] == [Decision.YES, Decision.NO, Decision.UNSURE, Decision.UNSURE]


def test_failed_calls_are_missing_and_marked_for_counting() -> None:
    with serving(lambda request: '{"answer": "Yes"}') as server:
        verifier = _verifier(server.url, 1)
        server.inject(*[Fault("status", 500)] * 3)  # the first attribute's call fails all three attempts
        answers = verifier.verify(_view("red"), ATTRIBUTES[:2])
        assert [a.answer for a in answers] == [Decision.UNSURE, Decision.YES]
        assert "model call failed (HTTP 500" in answers[0].reason and answers[0].debug[FAILED_KEY] == 1
        assert FAILED_KEY not in answers[1].debug
        assert (verifier.model_calls, verifier.failed_calls) == (2, 1)
        one_call = _verifier(server.url, 1, one_call_per_view=True)
        server.inject(*[Fault("drop")] * 3)
        failed = one_call.verify(_view("red"), ATTRIBUTES)
        assert all(a.answer is Decision.UNSURE for a in failed)
        assert [a.debug.get(FAILED_KEY, 0) for a in failed] == [1, 0, 0, 0]  # one failed call, counted once


def test_empty_attribute_list_makes_no_call() -> None:
    with serving(lambda request: "never") as server:
        assert _verifier(server.url, 2).verify(_view("red"), ()) == []
        assert server.requests_served == 0


def test_image_is_sent_losslessly() -> None:
    seen: list[np.ndarray] = []

    def answer(request: ChatRequest) -> str:
        seen.extend(request.images)
        return '{"answer": "Yes"}'

    view = _view("blue", 3)
    with serving(answer) as server:
        _verifier(server.url, 1).verify(view, ATTRIBUTES[:1])
    assert len(seen) == 1 and np.array_equal(seen[0], view.crop)
