"""Tiny CLIP, SigLIP and SigLIP2 models: the published architectures at toy size, saved like a checkpoint.

No CLIP or SigLIP weights exist in any registry these machines reach (docs/models.md), so tests and the
model benchmark build these from configs, each with a tokenizer made here (a real one of the right class, so
the processor round-trips it), and ``save_pretrained`` them into a directory that then loads through the same
path a user's checkpoint takes (:mod:`aiv_models.embedding`). The weights are random: training them (see the
tests' support code) is a separate step. The traps the doc lists are handled here: CLIP's ``eos_token_id``
must equal the tokenizer's, SigLIP's fast tokenizer must be a word-level one that reloads, and SigLIP2 needs a
real ``Siglip2Tokenizer`` with byte fallback (a generic one comes back empty).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ..local_weights import offline_hub

#: The families this module builds, by the ``model_type`` their directory's config.json carries.
TINY_FAMILIES = ("clip", "siglip", "siglip2")

#: Words every tiny tokenizer knows as whole tokens (others fall back to pieces or bytes).
_BASE_WORDS_TEXT = (
    "a an the object with and of in on red blue green yellow white black orange purple pink brown grey "
    "gray mug cup bag backpack ball book hat keys laptop shoes toy wallet watch camera visor bear "
    "teddy cellphone phone eyeglasses headphones handle logo text stripes dots pattern floral small large"
)
BASE_WORDS: tuple[str, ...] = tuple(_BASE_WORDS_TEXT.split())

IMAGE_SIZE = 32
PATCH_SIZE = 8
#: The Siglip2Processor's call defaults (16 px patches, at most 256 of them), which the published NaFlex
#: checkpoints' image processors carry too; ``tiny_siglip2(patch_size=SIGLIP2_PATCH_SIZE)`` builds a tiny
#: SigLIP2 at these settings (the reference calls the processor with its defaults).
SIGLIP2_PATCH_SIZE = 16
SIGLIP2_MAX_PATCHES = 256
CLIP_TEXT_POSITIONS = 77  # as the published CLIP text models
SIGLIP_TEXT_LENGTH = 64  # as the published SigLIP / SigLIP2 text models


def _transformers() -> Any:
    """transformers, imported with the hub disabled (typed loosely: its classes are untyped)."""
    offline_hub()
    import transformers

    return transformers


def _corpus(words: Iterable[str]) -> list[str]:
    vocabulary = sorted(set(BASE_WORDS) | set(words))
    return [f"a {word} object" for word in vocabulary] + [" ".join(vocabulary)]


def clip_tokenizer(words: Iterable[str] = ()) -> Any:
    """A ``CLIPTokenizer`` over a byte-level BPE trained here on the base words (+ ``words``)."""
    offline_hub()
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tf = _transformers()

    specials = ["<|startoftext|>", "<|endoftext|>"]
    backend = Tokenizer(models.BPE(unk_token="<|endoftext|>", end_of_word_suffix="</w>"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    trainer = trainers.BpeTrainer(
        vocab_size=600,
        special_tokens=specials,
        end_of_word_suffix="</w>",
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    backend.train_from_iterator(_corpus(words), trainer)
    merges = [
        tuple(item) if isinstance(item, list) else tuple(str(item).split(" "))
        for item in json.loads(backend.to_str())["model"]["merges"]
    ]
    return tf.CLIPTokenizer(vocab=backend.get_vocab(), merges=merges, model_max_length=CLIP_TEXT_POSITIONS)


def siglip_tokenizer(words: Iterable[str] = ()) -> Any:
    """A word-level ``PreTrainedTokenizerFast`` (lower-cased, punctuation split) that reloads through
    ``AutoProcessor``; unknown words map to ``<unk>``."""
    offline_hub()
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    tf = _transformers()

    specials = ["<pad>", "</s>", "<unk>"]
    vocabulary = specials + sorted(set(BASE_WORDS) | {w.lower() for w in words})
    backend = Tokenizer(models.WordLevel({word: i for i, word in enumerate(vocabulary)}, unk_token="<unk>"))
    backend.normalizer = normalizers.Lowercase()
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    return tf.PreTrainedTokenizerFast(
        tokenizer_object=backend,
        pad_token="<pad>",
        eos_token="</s>",
        unk_token="<unk>",
        model_max_length=SIGLIP_TEXT_LENGTH,
    )


def _word_merges(words: Iterable[str]) -> list[tuple[str, str]]:
    """Left-to-right merges that build every word (and ``▁word``) from its letters."""
    merges: list[tuple[str, str]] = []
    seen: set[tuple[str, str]] = set()
    for word in sorted(set(words)):
        piece = word[0]
        for letter in word[1:]:
            pair = (piece, letter)
            if pair not in seen:
                seen.add(pair)
                merges.append(pair)
            piece += letter
        pair = ("▁", word)
        if pair not in seen:
            seen.add(pair)
            merges.append(pair)
    return merges


def siglip2_tokenizer(words: Iterable[str] = ()) -> Any:
    """A real ``Siglip2Tokenizer``: specials, 256 byte-fallback tokens, ``▁``, letters and word merges."""
    tf = _transformers()

    vocab: dict[str, int] = {}
    for token in ("<pad>", "<eos>", "<bos>", "<unk>", "<mask>"):
        vocab[token] = len(vocab)
    for byte in range(256):
        vocab[f"<0x{byte:02X}>"] = len(vocab)
    vocab["▁"] = len(vocab)
    for letter in "abcdefghijklmnopqrstuvwxyz":
        vocab[letter] = len(vocab)
    alphabetic = [w.lower() for w in (*BASE_WORDS, *words) if w.isalpha() and w.isascii()]
    merges = _word_merges(alphabetic)
    for left, right in merges:
        vocab.setdefault(left + right, len(vocab))
    return tf.Siglip2Tokenizer(vocab=vocab, merges=merges, model_max_length=SIGLIP_TEXT_LENGTH)


def _layers(hidden: int = 32) -> dict[str, int]:
    return {
        "hidden_size": hidden,
        "intermediate_size": 2 * hidden,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
    }


def tiny_clip(words: Iterable[str] = ()) -> tuple[Any, Any]:
    """``(CLIPModel, CLIPProcessor)`` with random weights, 32 px images, 8 px patches."""
    tf = _transformers()

    tokenizer = clip_tokenizer(words)
    config = tf.CLIPConfig(
        text_config={
            **_layers(),
            "vocab_size": len(tokenizer),
            "max_position_embeddings": CLIP_TEXT_POSITIONS,
            # Pooling looks for the EOS id: a wrong one makes every text embed alike.
            "eos_token_id": tokenizer.eos_token_id,
            "bos_token_id": tokenizer.bos_token_id,
            "pad_token_id": tokenizer.pad_token_id,
        },
        vision_config={**_layers(), "image_size": IMAGE_SIZE, "patch_size": PATCH_SIZE},
        projection_dim=32,
    )
    image_processor = tf.CLIPImageProcessorPil(
        size={"shortest_edge": IMAGE_SIZE}, crop_size={"height": IMAGE_SIZE, "width": IMAGE_SIZE}
    )
    return tf.CLIPModel(config).eval(), tf.CLIPProcessor(image_processor=image_processor, tokenizer=tokenizer)


def tiny_siglip(words: Iterable[str] = ()) -> tuple[Any, Any]:
    """``(SiglipModel, SiglipProcessor)`` with random weights, 32 px images, 8 px patches."""
    tf = _transformers()

    tokenizer = siglip_tokenizer(words)
    config = tf.SiglipConfig(
        text_config={
            **_layers(),
            "vocab_size": len(tokenizer),
            "max_position_embeddings": SIGLIP_TEXT_LENGTH,
            "pad_token_id": tokenizer.pad_token_id,
            "eos_token_id": tokenizer.eos_token_id,
            "bos_token_id": tokenizer.eos_token_id,
        },
        vision_config={**_layers(), "image_size": IMAGE_SIZE, "patch_size": PATCH_SIZE},
    )
    image_processor = tf.SiglipImageProcessorPil(size={"height": IMAGE_SIZE, "width": IMAGE_SIZE})
    return tf.SiglipModel(config).eval(), tf.SiglipProcessor(
        image_processor=image_processor, tokenizer=tokenizer
    )


def tiny_siglip2(words: Iterable[str] = (), *, patch_size: int = PATCH_SIZE) -> tuple[Any, Any]:
    """``(Siglip2Model, Siglip2Processor)`` with random weights: at most 16 patches of 8 px (the default), or
    with ``patch_size=16`` the processor's own defaults, at most 256 patches of 16 px."""
    tf = _transformers()

    tokenizer = siglip2_tokenizer(words)
    if patch_size == SIGLIP2_PATCH_SIZE:
        patches = SIGLIP2_MAX_PATCHES
    elif patch_size == PATCH_SIZE:
        patches = (IMAGE_SIZE // PATCH_SIZE) ** 2
    else:
        raise ValueError(
            f"tiny SigLIP2 patch_size {patch_size}: expected {PATCH_SIZE} or {SIGLIP2_PATCH_SIZE}"
        )
    config = tf.Siglip2Config(
        text_config={
            **_layers(),
            "vocab_size": len(tokenizer),
            "max_position_embeddings": SIGLIP_TEXT_LENGTH,
            "pad_token_id": tokenizer.pad_token_id,
            "eos_token_id": tokenizer.eos_token_id,
            "bos_token_id": tokenizer.bos_token_id,
        },
        vision_config={**_layers(), "num_patches": patches, "patch_size": patch_size},
    )
    image_processor = tf.Siglip2ImageProcessorPil(patch_size=patch_size, max_num_patches=patches)
    return tf.Siglip2Model(config).eval(), tf.Siglip2Processor(
        image_processor=image_processor, tokenizer=tokenizer
    )


def tiny_embedding_model(
    family: str, words: Iterable[str] = (), *, patch_size: int | None = None
) -> tuple[Any, Any]:
    """``(model, processor)`` of ``family`` (clip | siglip | siglip2) with random weights; ``patch_size``
    (SigLIP2 only): 8 (the default) or 16 (the processor's defaults)."""
    builders = {"clip": tiny_clip, "siglip": tiny_siglip}
    if family == "siglip2":
        return tiny_siglip2(words, patch_size=patch_size or PATCH_SIZE)
    if family not in builders:
        raise ValueError(f"unknown tiny embedding family {family!r}; expected one of {list(TINY_FAMILIES)}")
    if patch_size is not None:
        raise ValueError(f"tiny {family}: patch_size is a SigLIP2 option")
    return builders[family](words)


def save_model_dir(model: Any, processor: Any, directory: str | os.PathLike[str]) -> Path:
    """Save ``model`` (safetensors) and ``processor`` into ``directory`` as a checkpoint directory."""
    target = Path(directory)
    target.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(target, safe_serialization=True)
    processor.save_pretrained(target)
    return target


def build_tiny_embedding_dirs(
    root: str | os.PathLike[str], families: Sequence[str] = TINY_FAMILIES, seed: int = 0
) -> dict[str, Path]:
    """Untrained tiny checkpoints of ``families`` under ``root/<family>`` (for timing and loading checks)."""
    offline_hub()
    import torch

    torch.manual_seed(seed)
    out: dict[str, Path] = {}
    for family in families:
        model, processor = tiny_embedding_model(family)
        out[family] = save_model_dir(model, processor, Path(root) / family)
    return out


__all__ = [
    "BASE_WORDS",
    "IMAGE_SIZE",
    "PATCH_SIZE",
    "SIGLIP2_MAX_PATCHES",
    "SIGLIP2_PATCH_SIZE",
    "TINY_FAMILIES",
    "build_tiny_embedding_dirs",
    "clip_tokenizer",
    "save_model_dir",
    "siglip2_tokenizer",
    "siglip_tokenizer",
    "tiny_clip",
    "tiny_embedding_model",
    "tiny_siglip",
    "tiny_siglip2",
]
