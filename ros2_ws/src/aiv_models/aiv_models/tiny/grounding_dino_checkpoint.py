"""A Grounding DINO checkpoint directory built from configs: tiny for tests, full-size for timing.

No Grounding DINO weights can be downloaded here (docs/models.md), so tests build a directory with the
same files a published checkpoint has (``config.json``, ``model.safetensors``, ``preprocessor_config.json``,
tokenizer files) and load it back through the detector's own loading path. Weights are random: such a model
exercises loading, the processor, shapes and post-processing, never accuracy.

The tokenizer is a real BERT WordPiece tokenizer over a small vocabulary made here. Grounding DINO's text
masks hard-code BERT's ids of ``[CLS]`` 101, ``[SEP]`` 102, ``.`` 1012 and ``?`` 1029, so the vocabulary puts
them (and ``[PAD]`` 0, ``[UNK]`` 100, ``[MASK]`` 103) where BERT has them and fills the gaps with ``[unusedN]``.
It is passed as ``vocab=`` (a mapping); ``BertTokenizer(vocab_file=...)`` is silently ignored by transformers
v5 and yields a 5-token vocabulary that maps every word to ``[UNK]``.

:func:`full_size_config` is the published grounding-dino-tiny architecture (Swin-T + BERT-base, ~172M
parameters): a benchmark builds it with random weights to measure true latency, which does not depend on the
weight values.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

#: Where BERT (and so Grounding DINO's text masks) has its special tokens.
BERT_SPECIAL_IDS = {"[PAD]": 0, "[UNK]": 100, "[CLS]": 101, "[SEP]": 102, "[MASK]": 103, ".": 1012, "?": 1029}
#: Words the tests' queries use; ids from 2000 on, like ordinary BERT word pieces.
DEFAULT_WORDS = (
    "a", "an", "the", "object", "mug", "cup", "coffee", "bottle", "ball", "box", "square", "red", "green",
    "blue", "yellow", "white", "black", "with", "and", "of",
)  # fmt: skip
#: BERT-base's vocabulary size (the full-size text model's embedding table).
BERT_VOCAB_SIZE = 30522


def make_vocab(words: Iterable[str] = DEFAULT_WORDS, size: int | None = None) -> dict[str, int]:
    """A WordPiece vocabulary with BERT's special-token ids, ``words`` from id 2000, padded to ``size``."""
    vocab = dict(BERT_SPECIAL_IDS)
    next_id = 2000
    for word in words:
        if word not in vocab:
            vocab[word] = next_id
            next_id += 1
    total = max(next_id, size or 0)
    taken = set(vocab.values())
    for index in range(total):
        if index not in taken:
            vocab[f"[unused{index}]"] = index
    return vocab


def make_tokenizer(vocab: dict[str, int]) -> Any:
    """A lower-casing BERT WordPiece tokenizer over ``vocab`` (the kind published checkpoints ship)."""
    from transformers import BertTokenizer

    tokenizer = BertTokenizer(vocab=vocab, do_lower_case=True)
    if len(tokenizer) != len(vocab):  # guards the v5 trap described in the module docstring
        raise RuntimeError(f"tokenizer has {len(tokenizer)} tokens, expected {len(vocab)}")
    return tokenizer


def _swin(**options: Any) -> dict[str, Any]:
    """Swin backbone options; Grounding DINO reads the last three stages (``out_features`` is a config kwarg
    that transformers' type hints do not list, hence a mapping)."""
    return {**options, "out_features": ["stage2", "stage3", "stage4"]}


def tiny_config(vocab_size: int) -> Any:
    """A Grounding DINO config a few hundred kB large: small Swin backbone, one-layer BERT, d_model 32."""
    from transformers import BertConfig, GroundingDinoConfig, SwinConfig

    backbone = SwinConfig(**_swin(embed_dim=24, depths=[1, 1, 1, 1], num_heads=[1, 1, 2, 2], window_size=4))
    text = BertConfig(
        vocab_size=vocab_size,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=256,
    )
    return GroundingDinoConfig(
        backbone_config=backbone,
        text_config=text,
        d_model=32,
        num_queries=30,
        encoder_layers=1,
        decoder_layers=2,  # the two-stage head needs at least two decoder layers
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        num_feature_levels=4,
        encoder_n_points=2,
        decoder_n_points=2,
        max_text_len=256,
    )


def full_size_config(vocab_size: int = BERT_VOCAB_SIZE) -> Any:
    """The published grounding-dino-tiny architecture (Swin-T backbone, BERT-base text model, 900 queries)."""
    from transformers import BertConfig, GroundingDinoConfig, SwinConfig

    backbone = SwinConfig(**_swin(embed_dim=96, depths=[2, 2, 6, 2], num_heads=[3, 6, 12, 24], window_size=7))
    return GroundingDinoConfig(backbone_config=backbone, text_config=BertConfig(vocab_size=vocab_size))


def save_grounding_dino(
    directory: str | os.PathLike[str],
    *,
    full_size: bool = False,
    shortest_edge: int = 64,
    longest_edge: int = 128,
    words: Iterable[str] = DEFAULT_WORDS,
    seed: int = 0,
) -> str:
    """Build a random Grounding DINO with its processor and save it as a checkpoint directory (safetensors).

    ``shortest_edge`` / ``longest_edge`` set the image processor's resize (the published checkpoints use 800 /
    1333; the tiny default keeps a CPU forward well under a second). Returns the directory.
    """
    import torch
    from transformers import (
        AutoModelForZeroShotObjectDetection,
        GroundingDinoImageProcessorPil,
        GroundingDinoProcessor,
    )

    vocab = make_vocab(words, BERT_VOCAB_SIZE if full_size else None)
    tokenizer = make_tokenizer(vocab)
    config = full_size_config(len(vocab)) if full_size else tiny_config(len(vocab))
    torch.manual_seed(seed)
    model = AutoModelForZeroShotObjectDetection.from_config(config)  # type: ignore[no-untyped-call]
    image_processor = GroundingDinoImageProcessorPil(
        size={"shortest_edge": shortest_edge, "longest_edge": longest_edge}
    )
    processor = GroundingDinoProcessor(  # type: ignore[no-untyped-call]
        image_processor=image_processor, tokenizer=tokenizer
    )
    os.makedirs(directory, exist_ok=True)
    model.save_pretrained(directory, safe_serialization=True)
    processor.save_pretrained(directory)
    return os.fspath(directory)


def save_grounding_dino_once(directory: str, lock_path: str, **options: Any) -> str:
    """:func:`save_grounding_dino` unless ``directory`` already holds it; concurrent callers (pytest-xdist
    workers, parallel benchmark runs) build it once under a file lock and publish it with an atomic rename."""
    import shutil

    from filelock import FileLock  # a dependency of transformers / huggingface_hub

    with FileLock(lock_path):
        if not os.path.isfile(os.path.join(directory, "model.safetensors")):
            partial = f"{directory}.partial"
            shutil.rmtree(partial, ignore_errors=True)
            save_grounding_dino(partial, **options)
            os.replace(partial, directory)
    return directory
