"""The trained agent on a real (tiny) Qwen-VL through the local transport, with a LoRA adapter applied by peft.

The model is the real architecture at toy size with random weights (built here: the session-trained colour
model of ``support.tiny_vlm`` answers a different prompt format), so its answers carry no ``<answer>`` block
and exercise the fuzzy path of spec §7.2. What is checked is the plumbing a released checkpoint takes: base
directory + ``language_model.adapter_dir`` built by ``language_model_from_params`` and applied with peft, the
system turn, both images and the agent's prompt reaching the model, and the step following the parsed reply.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from aiv_models.chat import ChatRequest
from aiv_verifier.agent.settings import AgentSettings
from aiv_verifier.agent.steps import ViewFrame
from aiv_verifier.agent.trained import TrainedAgent
from aiv_verifier.agent.trained_parse import map_action, parse_reply
from aiv_verifier.language_model import language_model_from_params
from aiv_verifier.model_config import LanguageModelParams, TrainedAgentParams
from aiv_verifier.query.types import QueryMode, QuerySpec
from support import offline_models

no_network = offline_models.no_network  # fixture

pytestmark = pytest.mark.slow


def lora_adapter(base: Path, out: Path) -> Path:
    """A LoRA adapter with random (non-zero) weights on the tiny model, saved as a released adapter is."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForImageTextToText

    torch.manual_seed(0)
    model = AutoModelForImageTextToText.from_pretrained(base, local_files_only=True)
    config = LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"], init_lora_weights=False)
    get_peft_model(model, config).save_pretrained(out)
    return out


def scene(colour: tuple[int, int, int]) -> np.ndarray:
    image = np.full((160, 96, 3), 128, np.uint8)
    image[40:120, 20:76] = colour
    return image


def test_trained_agent_on_the_tiny_vlm_with_a_lora_adapter(tmp_path: Path, no_network: None) -> None:
    from aiv_models.tiny.qwen_vl_checkpoint import build_tiny_qwen_vl

    offline_models.limit_torch_threads()
    tiny_vlm_dir = build_tiny_qwen_vl(
        tmp_path / "tiny", corpus=["<answer>verification: Yes action: STOP</answer>"]
    )
    adapter = lora_adapter(tiny_vlm_dir, tmp_path / "adapter")
    params = LanguageModelParams(
        transport="local", model_dir=str(tiny_vlm_dir), adapter_dir=str(adapter), max_new_tokens=12
    )
    model = language_model_from_params(params)
    assert model.identity["adapter"]  # the adapter's fingerprint names what answers
    base = language_model_from_params(LanguageModelParams(transport="local", model_dir=str(tiny_vlm_dir)))

    agent = TrainedAgent.from_params(TrainedAgentParams(), model, AgentSettings())
    query = QuerySpec(
        ("a red ball", "a round red toy", "a shiny ball"), QueryMode.ATTRIBUTE, "ball", "hint", (), ""
    )
    session = agent.new_session(query, episode_key="tiny", max_steps=2)
    frame = ViewFrame(scene((205, 30, 35)), 0, 0, gt_box=(20.0, 40.0, 76.0, 120.0), target_visible=True)
    step = session.observe(frame)

    (prompt,), (reply,) = session.prompts, session.replies
    assert prompt.startswith("Decide whether the object") and 'Target: "a red ball; a round red toy' in prompt
    system = agent.template.system
    crop = session.steps[0].crop.image
    # The step's reply is the adapted model's greedy answer to exactly this request (system turn, 2 images).
    assert reply == model.complete(ChatRequest.of(prompt, [frame.image, crop], system)).text
    expected = map_action(parse_reply(reply), remaining_steps=1)
    assert (step.decision, step.step_prediction) == (expected.decision, expected.step_prediction)
    # Both images reach the model (one image grid each) and the adapter answers, not the bare base model.
    inputs = model.transport.encode([ChatRequest.of(prompt, [frame.image, crop], system)])
    assert tuple(inputs["image_grid_thw"].shape) == (2, 3)
    assert type(model.transport.model).__name__ == "PeftModel"
    assert type(base.transport.model).__name__ != "PeftModel"
