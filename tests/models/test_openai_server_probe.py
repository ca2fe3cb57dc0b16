"""The start-up check against a third-party OpenAI-compatible server that does not list what it serves.

``transformers serve`` answers ``GET /v1/models`` from the hub cache only (HTTP 500 without one, ``[]`` with an
empty one), never with the model it loaded from a local directory. The check then probes with a one-token chat
completion before refusing: a working server starts, a server that cannot answer for the configured model is
refused with one line naming what ``/v1/models`` said and what the probe got. Run against the real server in its
own process (support.transformers_serve) serving a tiny untrained Qwen2.5-VL built here, hub off.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from collections.abc import Iterator

import numpy as np
import pytest
from aiv_models.chat import ChatModel, OpenAIChatTransport
from aiv_verifier.language_model import complete_one, language_model_from_params
from aiv_verifier.model_config import LanguageModelParams
from support import offline_models
from support.transformers_serve import TransformersServer, serve_unavailable, transformers_serve

if serve_unavailable():
    pytest.skip(serve_unavailable(), allow_module_level=True)

no_network = offline_models.no_network  # fixture
pytestmark = [pytest.mark.usefixtures("no_network"), pytest.mark.slow]

PROMPT = "Is the mug red?"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TransformersServer]:
    from aiv_models.tiny.qwen_vl_checkpoint import build_tiny_qwen_vl

    root = tmp_path_factory.mktemp("transformers-serve")
    offline_models.limit_torch_threads()
    model_dir = build_tiny_qwen_vl(root / "tiny-qwen-vl", corpus=[PROMPT, "Reply with one word."])
    hf_home = root / "hf-home"  # no hub/ inside: /v1/models answers HTTP 500
    hf_home.mkdir()
    with transformers_serve(model_dir, hf_home, root / "server.log") as running:
        yield running


def _models(server: TransformersServer) -> tuple[int, object]:
    """(HTTP status, the listed model ids or None) of ``GET /v1/models``."""
    try:
        with urllib.request.urlopen(f"{server.url}/models", timeout=10) as response:
            return response.status, [item["id"] for item in json.loads(response.read())["data"]]
    except urllib.error.HTTPError as error:
        return error.code, None


def _image() -> np.ndarray:
    image = np.full((96, 160, 3), (205, 30, 35), np.uint8)
    image[20:60, 40:100] = (35, 60, 210)
    return image


def test_transformers_serve_is_accepted_by_the_probe_and_answers(server: TransformersServer) -> None:
    assert _models(server) in ((500, None), (200, [])), server.log_tail()  # the model is never listed
    before = server.chat_posts()
    model = language_model_from_params(
        LanguageModelParams(transport="openai", base_url=server.url, model=server.model, max_new_tokens=8)
    )
    assert server.chat_posts() == before + 1  # the one-token probe, at start-up

    with_image = complete_one(model, PROMPT, [_image()])
    assert not with_image.failed and with_image.text, (with_image.error, server.log_tail())
    text_only = complete_one(model, PROMPT)
    assert not text_only.failed, text_only.error
    assert with_image.text != text_only.text  # the image reached the model (not silently dropped)
    assert server.chat_posts() == before + 3  # the calls themselves: no probe per call
    assert isinstance(model, ChatModel) and model.stats().failed == 0

    (server.hf_home / "hub").mkdir(exist_ok=True)  # an empty hub cache: /v1/models answers []
    assert _models(server) == (200, [])
    assert OpenAIChatTransport(server.url, server.model).check_server() == ""


def test_a_failing_probe_is_refused_with_one_line(server: TransformersServer) -> None:
    before = server.chat_posts()
    with pytest.raises(ValueError) as refused:
        language_model_from_params(
            LanguageModelParams(transport="openai", base_url=server.url, model="qwen-typo")
        )
    message = str(refused.value)
    assert "\n" not in message, message
    expected = (
        rf"{re.escape(server.url)}/models (answered HTTP 500|lists no models), and a one-token chat completion "
        rf"for model 'qwen-typo' failed: HTTP 400: .*Server is pinned to '{re.escape(server.model)}'; "
        r"requested 'qwen-typo'.*check_server: false"
    )
    assert re.search(expected, message), message
    assert server.chat_posts() == before + 1  # one probe, no retries
    started = language_model_from_params(
        LanguageModelParams(transport="openai", base_url=server.url, model="qwen-typo", check_server=False)
    )
    assert complete_one(started, PROMPT).error.startswith("HTTP 400")  # what every call would have got
