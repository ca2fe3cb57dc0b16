"""A tiny Qwen2.5-VL / Qwen3-VL built from a config, with a tokenizer trained here: the local chat path's test model.

No Qwen-VL weights exist in any registry these machines reach (docs/models.md), so the tests build the real
architecture at toy size (about 0.2M parameters), save it with ``save_pretrained`` and load it back through exactly
the path a user's checkpoint takes (:mod:`aiv_models.chat.local`). The directory holds:

- ``config.json`` + ``model.safetensors`` (random weights; train them to make answers mean something);
- a byte-level BPE tokenizer trained on ``corpus`` with the Qwen special tokens, whose ids the config's
  ``image_token_id`` / ``video_token_id`` / ``vision_start_token_id`` / ``vision_end_token_id`` repeat;
- ``preprocessor_config.json`` of the torchvision-free ``Qwen2VLImageProcessorPil`` with a small pixel cap
  (``max_image_pixels``), so a 512-px crop becomes a handful of vision tokens instead of hundreds;
- ``chat_template.jinja``: a compact Qwen-style template (system / user / assistant turns, images as
  ``<|vision_start|><|image_pad|><|vision_end|>`` before the text).

torch, transformers and tokenizers are imported inside the functions (importing this module costs nothing).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, cast

FAMILIES = ("qwen2_5_vl", "qwen3_vl")
SPECIAL_TOKENS: tuple[str, ...] = (
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|image_pad|>",
    "<|video_pad|>",
)
#: A Qwen-style chat template: each turn ``<|im_start|>role\n ... <|im_end|>\n``, images first in a user turn.
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' }}"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for item in message['content'] %}"
    "{% if item['type'] == 'image' %}{{ '<|vision_start|><|image_pad|><|vision_end|>' }}"
    "{% elif item['type'] == 'text' %}{{ item['text'] }}{% endif %}"
    "{% endfor %}{% endif %}"
    "{{ '<|im_end|>\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
#: Text every tiny tokenizer learns besides the caller's corpus: the answer format and JSON punctuation.
BASE_CORPUS: tuple[str, ...] = (
    '{"answer": "Yes"}',
    '{"answer": "No"}',
    '{"answer": "Unsure", "reason": "not visible"}',
    "You are a helpful assistant.",
)


def build_tokenizer(corpus: Iterable[str], vocab_size: int = 800) -> Any:
    """A ``Qwen2Tokenizer`` over a byte-level BPE trained on ``corpus`` (any text stays encodable: byte alphabet).

    Built from ``vocab`` + ``merges`` because the v5 constructor ignores file arguments it does not expect.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import Qwen2Tokenizer

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    bpe.train_from_iterator([*BASE_CORPUS, *corpus], trainer=trainer)
    vocab: dict[str, int] = bpe.get_vocab()
    model_state = bpe.model
    merges = _bpe_merges(model_state)
    tokenizer = Qwen2Tokenizer(
        vocab=vocab,
        merges=cast(Any, merges),  # the v5 annotation says strings; the BPE model takes these pairs
        unk_token="<|endoftext|>",
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
    )
    tokenizer.add_special_tokens({"additional_special_tokens": list(SPECIAL_TOKENS[1:])})
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


def _bpe_merges(model: Any) -> list[tuple[str, str]]:
    """The trained BPE model's merges as pairs (read back from the files it saves)."""
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        merges_file = next(f for f in model.save(scratch) if f.endswith("merges.txt"))
        lines = Path(merges_file).read_text(encoding="utf-8").splitlines()
    pairs = [line.split(" ") for line in lines if line and not line.startswith("#version")]
    return [(a, b) for a, b in pairs]


def tiny_config(family: str, tokenizer: Any, *, hidden: int = 32, layers: int = 2) -> Any:
    """The config of a tiny ``family`` model whose special-token ids match ``tokenizer``."""
    from transformers import AutoConfig

    if family not in FAMILIES:
        raise ValueError(f"unknown Qwen-VL family {family!r}; expected one of {list(FAMILIES)}")
    ids = {name: tokenizer.convert_tokens_to_ids(token) for name, token in _ID_TOKENS}
    heads = 2
    head_dim = hidden // heads
    half = head_dim // 2
    mrope = [half - 2 * (half // 3), half // 3, half // 3]  # sums to head_dim / 2
    text: dict[str, Any] = {
        "vocab_size": len(tokenizer),
        "hidden_size": hidden,
        "intermediate_size": hidden * 2,
        "num_hidden_layers": layers,
        "num_attention_heads": heads,
        "num_key_value_heads": heads,
        "max_position_embeddings": 4096,
        "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": mrope},
        "bos_token_id": tokenizer.convert_tokens_to_ids("<|endoftext|>"),
        "eos_token_id": tokenizer.convert_tokens_to_ids("<|im_end|>"),
        "pad_token_id": tokenizer.convert_tokens_to_ids("<|endoftext|>"),
    }
    vision: dict[str, Any] = {
        "depth": 1,
        "hidden_size": hidden,
        "intermediate_size": hidden * 2,
        "num_heads": heads,
        "out_hidden_size": hidden,
        "spatial_merge_size": 2,
        "temporal_patch_size": 2,
    }
    if family == "qwen2_5_vl":
        vision |= {"patch_size": 14, "window_size": 56, "fullatt_block_indexes": [0]}
    else:
        text |= {"head_dim": head_dim}
        text["rope_parameters"] |= {"mrope_interleaved": True}
        vision |= {"patch_size": 16, "num_position_embeddings": 64, "deepstack_visual_indexes": [0]}
    return AutoConfig.for_model(
        family,
        text_config=text,
        vision_config=vision,
        tie_word_embeddings=False,
        **ids,
    )


_ID_TOKENS: tuple[tuple[str, str], ...] = (
    ("image_token_id", "<|image_pad|>"),
    ("video_token_id", "<|video_pad|>"),
    ("vision_start_token_id", "<|vision_start|>"),
    ("vision_end_token_id", "<|vision_end|>"),
)


def image_processor(family: str, max_image_pixels: int) -> Any:
    """The torchvision-free image processor with the family's patch size and a pixel cap."""
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

    patch = 14 if family == "qwen2_5_vl" else 16
    unit = (patch * 2) ** 2  # one merged vision token
    return Qwen2VLImageProcessorPil(
        patch_size=patch,
        merge_size=2,
        temporal_patch_size=2,
        size={"shortest_edge": unit, "longest_edge": max(unit, max_image_pixels)},
    )


def build_tiny_qwen_vl(
    directory: str | os.PathLike[str],
    *,
    family: str = "qwen2_5_vl",
    corpus: Sequence[str] = (),
    vocab_size: int = 800,
    hidden: int = 32,
    layers: int = 2,
    max_image_pixels: int = 112 * 112,
    seed: int = 0,
) -> Path:
    """Build a random tiny ``family`` model and save everything the local chat transport loads into ``directory``."""
    import torch
    from transformers import AutoModelForImageTextToText

    torch.manual_seed(seed)
    tokenizer = build_tokenizer(corpus, vocab_size)
    config = tiny_config(family, tokenizer, hidden=hidden, layers=layers)
    model = AutoModelForImageTextToText.from_config(config)  # type: ignore[no-untyped-call]
    model.generation_config.eos_token_id = config.text_config.eos_token_id
    model.generation_config.pad_token_id = config.text_config.pad_token_id
    return save_tiny_qwen_vl(directory, model, tokenizer, image_processor(family, max_image_pixels))


def save_tiny_qwen_vl(directory: str | os.PathLike[str], model: Any, tokenizer: Any, processor: Any) -> Path:
    """Write model (safetensors), tokenizer, image processor config and chat template (also after training)."""
    root = Path(directory)
    root.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(root, safe_serialization=True)
    tokenizer.save_pretrained(root)
    processor.save_pretrained(root)
    (root / "chat_template.jinja").write_text(CHAT_TEMPLATE, encoding="utf-8")
    return root


#: Qwen3-VL-4B-Instruct's published architecture (its config.json): a 36-layer 2560-wide text model with grouped
#: query attention (32 heads, 8 key-value heads of 128) and a 24-layer ViT with 16-px patches and DeepStack taps.
QWEN3_VL_4B_TEXT: dict[str, Any] = {
    "vocab_size": 151936,
    "hidden_size": 2560,
    "intermediate_size": 9728,
    "num_hidden_layers": 36,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "max_position_embeddings": 262144,
    "rms_norm_eps": 1e-6,
    "rope_parameters": {
        "rope_type": "default",
        "rope_theta": 5000000.0,
        "mrope_section": [24, 20, 20],
        "mrope_interleaved": True,
    },
}
QWEN3_VL_4B_VISION: dict[str, Any] = {
    "depth": 24,
    "hidden_size": 1024,
    "intermediate_size": 4096,
    "num_heads": 16,
    "patch_size": 16,
    "spatial_merge_size": 2,
    "temporal_patch_size": 2,
    "out_hidden_size": 2560,
    "num_position_embeddings": 2304,
    "deepstack_visual_indexes": [5, 11, 17],
    "hidden_act": "gelu_pytorch_tanh",
}


def build_full_size_qwen3_vl_4b(directory: str | os.PathLike[str], *, device: str = "cpu") -> Path:
    """Qwen3-VL-4B at its published size with random weights (bfloat16), for timing: speed does not depend on the
    weight values. The tokenizer is this module's small one (its ids are valid in the full vocabulary), so prompts
    tokenise a little differently from the real tokenizer; image tokens (256 for a 512-px crop) are exact.
    ``device`` is where the weights are initialised (a GPU does it in seconds, a CPU in minutes)."""
    import torch
    from transformers import AutoConfig, AutoModelForImageTextToText

    tokenizer = build_tokenizer(BASE_CORPUS, 800)
    ids = {name: tokenizer.convert_tokens_to_ids(token) for name, token in _ID_TOKENS}
    text = dict(QWEN3_VL_4B_TEXT) | {
        "bos_token_id": tokenizer.convert_tokens_to_ids("<|endoftext|>"),
        "eos_token_id": tokenizer.convert_tokens_to_ids("<|im_end|>"),
        "pad_token_id": tokenizer.convert_tokens_to_ids("<|endoftext|>"),
    }
    config = AutoConfig.for_model(
        "qwen3_vl", text_config=text, vision_config=QWEN3_VL_4B_VISION, tie_word_embeddings=True, **ids
    )
    with torch.device(device):
        model = AutoModelForImageTextToText.from_config(config, dtype=torch.bfloat16)  # type: ignore[no-untyped-call]
    model.generation_config.eos_token_id = text["eos_token_id"]
    model.generation_config.pad_token_id = text["pad_token_id"]
    return save_tiny_qwen_vl(directory, model, tokenizer, image_processor("qwen3_vl", 1024 * 1024))
