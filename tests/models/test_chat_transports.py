"""The chat transports for real: the session-trained tiny VLM in-process and behind the OpenAI-compatible server,
and the HTTP client's reference behaviour (2 retries, connect/read timeouts, a failed call answers "" and is
counted). The tiny VLM answers Yes only when the crop's colour is the one asked about, so an answer that follows
the image proves the image reached the model through the processor, the data URL and the server.
"""

from __future__ import annotations

import random
import socket
from pathlib import Path

import numpy as np
import pytest
from aiv_models.chat import ChatRequest, open_http_chat, open_local_chat
from aiv_models.chat.local import LocalChatTransport
from aiv_models.local_weights import ModelDirError, directory_fingerprint
from aiv_models.openai_server import Fault
from aiv_verifier.language_model import complete_many, language_model_from_params, language_model_identity
from aiv_verifier.model_config import LanguageModelParams
from support import offline_models, tiny_vlm
from support.llm_server import MODEL_NAME, serving, tiny_vlm_answer
from support.tiny_vlm import NO, YES, prompt_for, scene

no_network = offline_models.no_network  # fixture
tiny_vlm_dir = tiny_vlm.tiny_vlm_dir  # fixture
pytestmark = [pytest.mark.usefixtures("no_network"), pytest.mark.slow]

CASES = [("red", "red"), ("red", "blue"), ("blue", "red"), ("blue", "blue")]


def _case(index: int, shown: str, asked: str) -> tuple[np.ndarray, str, str]:
    rng = random.Random(500 + index)
    return scene(rng, shown, (96, 160)), prompt_for(rng, asked), YES if shown == asked else NO


def _local(model_dir: Path, **options: object):
    offline_models.limit_torch_threads()
    return open_local_chat(model_dir, device="cpu", dtype="float32", max_new_tokens=16, **options)


def test_local_transport_answers_follow_the_image(tiny_vlm_dir: Path) -> None:
    model = _local(tiny_vlm_dir)
    for index, (shown, asked) in enumerate(CASES):
        image, prompt, expected = _case(index, shown, asked)
        assert model.generate(prompt, [image]) == expected, (shown, asked)
    assert model.identity == {
        "transport": "local",
        "model_type": "qwen2_5_vl",
        "weights": directory_fingerprint(tiny_vlm_dir),
        "adapter": "",
    }
    assert _local(tiny_vlm_dir).transport is model.transport  # one load per process and weights


def test_http_transport_gives_the_in_process_answers(tiny_vlm_dir: Path) -> None:
    local = _local(tiny_vlm_dir)
    cases = [_case(index, shown, asked) for index, (shown, asked) in enumerate(CASES)]
    with serving(tiny_vlm_answer(tiny_vlm_dir)) as server:
        model = open_http_chat(server.url, MODEL_NAME, max_new_tokens=16)
        answers = model.generate_many([ChatRequest.of(prompt, [image]) for image, prompt, _ in cases])
        assert answers == [expected for _, _, expected in cases]
        assert answers == [local.generate(prompt, [image]) for image, prompt, _ in cases]
        assert server.requests_served == 4 and model.stats().failed == 0
        assert model.identity == {"transport": "openai", "base_url": server.url, "model": MODEL_NAME}


def test_qwen3_vl_plumbing_on_a_random_tiny_model(tmp_path: Path) -> None:
    """Qwen3-VL (patch 16, interleaved mrope, deepstack) through the same image-only processor and transport."""
    from aiv_models.tiny.qwen_vl_checkpoint import build_tiny_qwen_vl

    offline_models.limit_torch_threads()
    directory = build_tiny_qwen_vl(tmp_path / "q3", family="qwen3_vl", corpus=["Is the mug red?"])
    transport = LocalChatTransport(directory, device="cpu", dtype="float32")
    request = ChatRequest("Is the mug red?", (np.full((300, 500, 3), 200, np.uint8),), system="Be brief.")
    inputs = transport.encode([request])
    grid = inputs["image_grid_thw"][0]
    image_id = transport.processor.image_token_id
    assert int((inputs["input_ids"] == image_id).sum()) == int(grid.prod()) // 4  # merged patches
    assert inputs["pixel_values"].shape == (int(grid.prod()), 3 * 2 * 16 * 16)  # patch 16, temporal 2
    text = transport.processor.tokenizer.decode(inputs["input_ids"][0])
    assert text.startswith("<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\n<|vision_start|>")
    assert text.endswith("Is the mug red?<|im_end|>\n<|im_start|>assistant\n")
    result = transport.complete(request, 4)
    assert not result.failed and isinstance(result.text, str)
    assert not transport.complete(ChatRequest("text only"), 4).failed


def test_unusable_model_settings_fail_at_start_up(tmp_path: Path) -> None:
    with pytest.raises(ModelDirError, match="does not exist"):
        language_model_from_params(LanguageModelParams(transport="local", model_dir=str(tmp_path / "none")))
    with pytest.raises(ValueError, match=r"language_model\.model_dir"):
        language_model_from_params(LanguageModelParams(transport="local"))
    with pytest.raises(ValueError, match=r"language_model\.base_url"):
        language_model_from_params(LanguageModelParams(transport="openai", model="m"))
    with pytest.raises(ValueError, match=r"language_model\.model"):
        language_model_from_params(LanguageModelParams(transport="openai", base_url="http://127.0.0.1:1/v1"))
    pickled = tmp_path / "pickled"
    pickled.mkdir()
    (pickled / "config.json").write_text('{"model_type": "qwen2_5_vl"}')
    (pickled / "pytorch_model.bin").write_bytes(b"\x80")
    with pytest.raises(ModelDirError, match="pickle"):
        language_model_from_params(LanguageModelParams(transport="local", model_dir=str(pickled)))


def test_the_server_is_checked_once_at_start_up() -> None:
    """A mistyped URL or model name is refused before a run starts, instead of making every call "Missing"."""
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    with pytest.raises(ValueError, match=r"cannot reach .*/v1/models.*check_server"):
        language_model_from_params(LanguageModelParams(transport="openai", base_url=dead, model=MODEL_NAME))
    started = language_model_from_params(
        LanguageModelParams(transport="openai", base_url=dead, model=MODEL_NAME, check_server=False)
    )
    assert started.identity["base_url"] == dead  # started anyway: its calls fail and are counted
    with serving(lambda request: '{"answer": "Yes"}') as server:
        with pytest.raises(ValueError, match=r"does not serve model 'qwen-typo'; it serves \['"):
            language_model_from_params(
                LanguageModelParams(transport="openai", base_url=server.url, model="qwen-typo")
            )
        served = language_model_from_params(
            LanguageModelParams(transport="openai", base_url=server.url, model=MODEL_NAME)
        )
        assert served.generate("Is it red?", []) == '{"answer": "Yes"}'


# --- HTTP client behaviour (fault injection) ------------------------------------------------------------------


def _echo(request: ChatRequest) -> str:
    return f"echo {request.prompt} images={len(request.images)}"


def test_retries_recover_from_transient_failures() -> None:
    with serving(_echo) as server:
        model = open_http_chat(server.url, MODEL_NAME)
        server.inject(Fault("status", 503), Fault("drop"))
        result = model.complete(ChatRequest.of("hi"))
        assert (result.text, result.error, result.attempts) == ("echo hi images=0", "", 3)
        server.inject(Fault("malformed"))
        assert model.complete(ChatRequest.of("again")).attempts == 2
        assert model.stats().retries == 3 and model.stats().failed == 0


def test_a_call_failing_every_attempt_answers_empty_and_is_counted() -> None:
    with serving(_echo) as server:
        model = open_http_chat(server.url, MODEL_NAME)
        server.inject(Fault("status", 500), Fault("status", 502), Fault("malformed"))
        result = model.complete(ChatRequest.of("hi"))
        assert (result.text, result.attempts) == ("", 3) and result.failed
        assert "malformed" in result.error
        server.inject(Fault("status", 400))  # a client error does not heal: no retry
        bad = model.complete(ChatRequest.of("hi"))
        assert (bad.text, bad.attempts) == ("", 1) and bad.error.startswith("HTTP 400")
        assert model.generate("now it works") == "echo now it works images=0"
        stats = model.stats()
        assert (stats.calls, stats.failed, stats.retries) == (3, 2, 2)
        assert server.pending_faults() == 0


def test_read_timeout_and_refused_connection_answer_empty() -> None:
    with serving(_echo) as server:
        model = open_http_chat(server.url, MODEL_NAME, read_timeout_s=0.2, retries=1)
        server.inject(Fault("stall"), Fault("stall"))  # stalls end when the server stops
        result = model.complete(ChatRequest.of("slow"))
        assert (result.text, result.attempts) == ("", 2) and "read timeout" in result.error
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    listener.close()  # nothing listens on this port any more
    model = open_http_chat(f"http://127.0.0.1:{port}/v1", MODEL_NAME, connect_timeout_s=1.0)
    result = model.complete(ChatRequest.of("anyone?"))
    assert (result.text, result.attempts) == ("", 3) and "cannot connect" in result.error


def test_unknown_model_name_and_bad_requests_are_refused_by_the_server() -> None:
    with serving(_echo) as server:
        wrong = open_http_chat(server.url, "not-served", retries=0)
        assert wrong.complete(ChatRequest.of("x")).error.startswith("HTTP 404")
        model = open_http_chat(server.url, MODEL_NAME)
        image = np.zeros((5, 7), np.uint8)  # grey: sent as RGB
        assert model.generate("x", [image, image]) == "echo x images=2"


def test_concurrent_requests_are_served_in_parallel_and_come_back_in_order() -> None:
    import threading

    barrier = threading.Barrier(4, timeout=30)

    def answer(request: ChatRequest) -> str:
        barrier.wait()  # only returns once four calls are inside the server at the same time
        return request.prompt.upper()

    with serving(answer) as server:
        model = open_http_chat(server.url, MODEL_NAME, max_concurrency=4)
        prompts = [f"p{i}" for i in range(8)]
        results = complete_many(model, [ChatRequest.of(p) for p in prompts])
        assert [r.text for r in results] == [p.upper() for p in prompts]
        assert server.peak_in_flight == 4


def test_plain_language_models_get_the_same_api() -> None:
    class Failing:
        def generate(self, prompt: str, images: object) -> str:
            if prompt == "boom":
                raise RuntimeError("down")
            return prompt[::-1]

    results = complete_many(Failing(), [ChatRequest.of("abc"), ChatRequest.of("boom")])
    assert [(r.text, r.failed) for r in results] == [("cba", False), ("", True)]
    assert "RuntimeError: down" in results[1].error
    assert language_model_identity(Failing()) == {"transport": "custom", "class": "Failing"}
