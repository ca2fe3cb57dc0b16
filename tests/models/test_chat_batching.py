"""Batched local decoding answers exactly what one call at a time answers, and fails as one.

On the trained tiny VLM (an untrained model answers alike whatever it is shown and proves nothing): prompts of
different lengths (different attribute prompts, images of different sizes, one text-only call) decoded in one
left-padded ``generate`` give the same greedy token ids as each decoded alone; concurrent calls through the chat
model are gathered into batches by the transport; a batch whose forward fails fails every call in it, each
counted as a failed call, and the next batch is served.
"""

from __future__ import annotations

import random
import threading
from pathlib import Path

import numpy as np
import pytest
from aiv_models.batching import RequestBatcher
from aiv_models.chat import ChatRequest, open_local_chat
from aiv_models.chat.local import LocalChatTransport
from support import offline_models, tiny_vlm
from support.tiny_vlm import prompt_for, scene

no_network = offline_models.no_network  # fixture
tiny_vlm_dir = tiny_vlm.tiny_vlm_dir  # fixture
pytestmark = [pytest.mark.usefixtures("no_network"), pytest.mark.slow]


def _requests() -> list[ChatRequest]:
    rng = random.Random(7)
    requests = []
    for index, (colour, asked, size) in enumerate(
        [("red", "red", (96, 64)), ("blue", "red", (200, 120)), ("blue", "blue", (64, 64)), ("red", "blue", (320, 90)),
         ("red", "red", (128, 128)), ("blue", "blue", (90, 300)), ("red", "blue", (150, 150))]
    ):  # fmt: skip
        prompt = prompt_for(rng, asked)
        if index % 3 == 1:
            prompt += " Answer with the JSON object only."  # a longer prompt in the same batch
        requests.append(ChatRequest(prompt, (scene(rng, colour, size),)))
    requests.append(ChatRequest("Is the object red? Answer yes or no."))  # no image at all
    return requests


@pytest.fixture(scope="module")
def transport(tiny_vlm_dir: Path) -> LocalChatTransport:
    offline_models.limit_torch_threads()
    return LocalChatTransport(tiny_vlm_dir, device="cpu", dtype="float32")


def test_a_padded_batch_gives_the_token_ids_of_one_call_at_a_time(transport: LocalChatTransport) -> None:
    requests = _requests()
    alone = [transport.generate_ids([request], 12)[0] for request in requests]
    batched = transport.generate_ids(requests, 12)
    assert batched == alone
    answers = transport.processor.batch_decode(alone, skip_special_tokens=True)
    # The model is trained: the image-colour calls answer Yes and No, not one constant string.
    assert {'{"answer": "Yes"}', '{"answer": "No"}'} <= set(answers), answers
    lengths = {int(transport.encode([request])["input_ids"].shape[1]) for request in requests}
    assert len(lengths) >= 4, f"the prompts were not of different lengths: {lengths}"


def test_calls_about_one_crop_share_its_processing_and_answer_as_alone(transport: LocalChatTransport) -> None:
    """A view's attribute calls all show its one crop: the batch processes that crop once. The model's inputs
    are those of a batch whose every call carries its own copy, and the answers those of one call at a time."""
    rng = random.Random(11)
    red, blue = scene(rng, "red", (140, 90)), scene(rng, "blue", (80, 160))
    shared = [ChatRequest(prompt_for(rng, asked), (crop,)) for crop, asked in
              ((red, "red"), (red, "blue"), (blue, "blue"), (red, "red"), (blue, "red"))]  # fmt: skip
    copies = [
        ChatRequest(request.prompt, tuple(image.copy() for image in request.images)) for request in shared
    ]
    processed = transport.processor.image_processor
    calls: list[int] = []
    original = type(processed).__mro__[1].preprocess

    def counting(self: object, images: object, *args: object, **kwargs: object) -> object:
        calls.append(len(images))  # type: ignore[arg-type]
        return original(self, images, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(type(processed).__mro__[1], "preprocess", counting)
        together, apart = transport.encode(shared), transport.encode(copies)
    assert calls == [2, 5]  # two distinct crops, then five copies
    assert together.keys() == apart.keys()
    for key in together:
        assert together[key].equal(apart[key]), key
    alone = [transport.generate_ids([request], 12)[0] for request in shared]
    assert transport.generate_ids(shared, 12) == alone


def test_concurrent_calls_are_batched_and_answer_as_alone(tiny_vlm_dir: Path) -> None:
    offline_models.limit_torch_threads()
    requests = _requests()
    one_at_a_time = open_local_chat(tiny_vlm_dir, device="cpu", dtype="float32", max_new_tokens=12)
    batched = open_local_chat(
        tiny_vlm_dir, device="cpu", dtype="float32", max_new_tokens=12, max_batch=8, batch_window_s=0.2
    )
    assert not one_at_a_time.transport.parallel and batched.transport.parallel
    expected = [result.text for result in one_at_a_time.complete_many(requests)]
    results = batched.complete_many(requests)
    assert [result.text for result in results] == expected
    assert not any(result.failed for result in results)
    stats = batched.transport._batcher.stats  # type: ignore[attr-defined]
    assert stats.largest > 1 and stats.batches < len(requests), stats


def test_a_failed_batch_fails_each_call_and_the_next_batch_is_served(tiny_vlm_dir: Path) -> None:
    offline_models.limit_torch_threads()
    model = open_local_chat(
        tiny_vlm_dir, device="cpu", dtype="float32", max_new_tokens=12, max_batch=4, batch_window_s=0.5
    )
    good = _requests()[:3]
    broken = ChatRequest("What colour is it?", (np.zeros((4, 4, 7), dtype=np.uint8),))  # seven channels
    results = model.complete_many([*good, broken])
    assert all(result.failed for result in results), [result.text for result in results]
    assert model.stats().failed == 4
    again = model.complete_many(good)
    assert not any(result.failed for result in again)


def test_the_batcher_groups_by_key_and_limits_the_batch() -> None:
    seen: list[tuple[list[int], object]] = []
    gate = threading.Event()

    def run(batch, group):
        gate.wait(5.0)
        seen.append((list(batch), group))
        return [item * 10 for item in batch]

    batcher: RequestBatcher[int, int] = RequestBatcher(run, max_batch=3, window_s=0.3)
    answers: dict[int, int] = {}
    threads = [
        threading.Thread(target=lambda i=i: answers.__setitem__(i, batcher.submit(i, group=i % 2)))
        for i in range(8)
    ]
    for thread in threads:
        thread.start()
    gate.set()
    for thread in threads:
        thread.join(10.0)
    assert answers == {i: i * 10 for i in range(8)}
    assert all(len(batch) <= 3 for batch, _ in seen)
    assert all({item % 2 for item in batch} == {group} for batch, group in seen)
