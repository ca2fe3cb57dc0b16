"""Image-text scores of CLIP, SigLIP and SigLIP2 checkpoints from a local directory (spec §6), ROS-free.

The embedding baselines score a crop against each description. The reference scores every (crop, text) pair
with its own model call; here a view costs one image forward, because the text side of an episode never
changes: the texts are embedded once per episode (:class:`TextCache`, keyed by text), all in one batched
forward, and every view's scores are the image embedding against those rows. The numbers are the reference's:

- CLIP: cosine similarity of the L2-normalised image and text embeddings (no logit scale);
- SigLIP / SigLIP2: ``sigmoid(logits_per_image)`` = ``sigmoid(exp(logit_scale) · cos + logit_bias)``, the learned
  scale and bias included. The family follows the checkpoint's ``model_type`` (the reference looks at the
  model class name).

Text is tokenised as the reference does (CLIP: dynamic padding; SigLIP/SigLIP2: padded to the text model's
length); an empty text becomes "an object". The reference passes no truncation flag, so a text longer than the
text model's positions raises inside its call, is caught and scores 0.0; ``overlength="zero"`` reproduces that
(without the exception, so the other texts of the batch still score), ``"truncate"`` cuts the text to the
model's length instead. Either way a warning says so once per model.

torch and transformers are imported inside the functions that need them, after :func:`offline_hub`.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .local_weights import ModelDirError, ModelIdentity, check_model_dir, offline_hub
from .timing import StageClock

if TYPE_CHECKING:
    import torch

LOG = logging.getLogger(__name__)

#: model_type in config.json -> score family.
FAMILY_OF_MODEL_TYPE = {"clip": "clip", "siglip": "siglip", "siglip2": "siglip"}
OVERLENGTH_POLICIES = ("zero", "truncate")
#: What an empty description is scored as (the reference's substitute).
EMPTY_TEXT = "an object"
#: Two texts every real tokenizer tells apart; a tokenizer that does not is refused at load.
_PROBE_TEXTS = ("a red object", "a blue object")
WHAT = "CLIP / SigLIP embedding model"
EXAMPLE = "openai/clip-vit-large-patch14 or google/siglip2-so400m-patch14-384"


@dataclass(frozen=True)
class TextEmbeddings:
    """The embedded texts of one episode, in the order asked for.

    ``features`` holds one L2-normalised row per text (float32, on the model's device); ``overlength[i]`` says
    text i was longer than the text model (policy ``zero``: its row is unused and it scores 0.0).
    """

    texts: tuple[str, ...]
    features: Any
    overlength: tuple[bool, ...]


class TextCache:
    """Text rows already embedded, keyed by text; a session owns one, so an episode embeds each text once."""

    def __init__(self) -> None:
        self.rows: dict[str, tuple[Any, bool]] = {}

    def __contains__(self, text: object) -> bool:
        return text in self.rows

    def __len__(self) -> int:
        return len(self.rows)


def effective_text(text: str) -> str:
    """The text actually scored: an empty or blank description becomes "an object" (the reference)."""
    return text if text.strip() else EMPTY_TEXT


class EmbeddingModel:
    """A loaded CLIP / SigLIP / SigLIP2 checkpoint with the reference's scoring rule.

    ``text_forwards`` / ``image_forwards`` count model forwards (a batch of texts is one).
    """

    def __init__(
        self,
        model: Any,
        processor: Any,
        identity: ModelIdentity,
        device: torch.device,
        dtype: torch.dtype,
        overlength: str = "zero",
    ) -> None:
        if overlength not in OVERLENGTH_POLICIES:
            raise ValueError(f"overlength {overlength!r}: expected one of {list(OVERLENGTH_POLICIES)}")
        self.model = model
        self.processor = processor
        self.tokenizer = processor.tokenizer
        self.identity = identity
        self.model_type = identity.model_type
        self.family = FAMILY_OF_MODEL_TYPE[identity.model_type]
        self.device = device
        self.dtype = dtype
        self.overlength = overlength
        self.max_text_tokens = int(model.config.text_config.max_position_embeddings)
        self.times = StageClock()
        self.text_forwards = 0
        self.image_forwards = 0
        self._warned = False
        self._image_kwargs: dict[str, Any] = {}
        if identity.model_type == "siglip2":
            # Siglip2Processor's call defaults (256 patches of 16 px) override the image processor's own.
            image_processor = processor.image_processor
            self._image_kwargs = {
                "max_num_patches": int(image_processor.max_num_patches),
                "patch_size": int(image_processor.patch_size),
            }

    @classmethod
    def load(
        cls,
        model_dir: str | os.PathLike[str],
        *,
        device: str = "auto",
        dtype: str = "auto",
        overlength: str = "zero",
        parameter: str = "embedding.model_dir",
    ) -> EmbeddingModel:
        """Check ``model_dir`` and load it (local files, safetensors only); one-line :class:`ModelDirError`
        when it cannot be used."""
        if overlength not in OVERLENGTH_POLICIES:
            raise ModelDirError(
                f"embedding overlength {overlength!r} is not a policy; expected one of {list(OVERLENGTH_POLICIES)}"
            )
        identity = check_model_dir(
            model_dir,
            what=WHAT,
            model_types=tuple(FAMILY_OF_MODEL_TYPE),
            example=EXAMPLE,
            parameter=parameter,
        )
        from .torch_runtime import resolve_device, resolve_dtype

        torch_device = resolve_device(device, parameter.rsplit(".", 1)[0] + ".device")
        torch_dtype = resolve_dtype(dtype, torch_device, parameter.rsplit(".", 1)[0] + ".dtype")
        offline_hub()
        import transformers

        library: Any = transformers  # its auto classes are untyped
        try:
            model = library.AutoModel.from_pretrained(
                identity.path, local_files_only=True, use_safetensors=True, dtype=torch_dtype
            )
            processor = library.AutoProcessor.from_pretrained(identity.path, local_files_only=True)
        except (OSError, ValueError, KeyError, TypeError) as error:
            first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise ModelDirError(
                f"{WHAT} in {identity.path!r} ({parameter}) cannot be loaded: {first}"
            ) from None
        if (
            getattr(processor, "tokenizer", None) is None
            or getattr(processor, "image_processor", None) is None
        ):
            raise ModelDirError(
                f"{WHAT} in {identity.path!r} ({parameter}) has no complete processor (tokenizer + image "
                "processor): save the checkpoint's processor with `save_pretrained` into the same directory"
            )
        loaded = cls(
            model.to(torch_device).eval(), processor, identity, torch_device, torch_dtype, overlength
        )
        loaded.check_tokenizer()
        LOG.info("embedding model: %s", loaded.describe())
        return loaded

    def describe(self) -> str:
        """One line: family, type, device, dtype, directory and fingerprint (logged at load, printed by the
        benchmark)."""
        dtype = str(self.dtype).replace("torch.", "")
        return (
            f"{self.model_type} ({self.family} scores) on {self.device} in {dtype} from {self.identity.path} "
            f"[{self.identity.fingerprint[:12]}]"
        )

    def check_tokenizer(self) -> None:
        """Refuse a tokenizer that cannot tell two different texts apart: one whose vocabulary is broken or
        empty maps every word to the unknown token, so every text embeds alike and every verdict would be the
        same whatever the description."""
        special = set(self.tokenizer.all_special_ids)
        ids = [list(self.tokenizer(text)["input_ids"]) for text in _PROBE_TEXTS]
        words = [[token for token in row if token not in special] for row in ids]
        if ids[0] == ids[1] or words[0] == words[1] or len(set(words[0]) | set(words[1])) < 2:
            raise ModelDirError(
                f"{WHAT} in {self.identity.path!r}: its tokenizer gives {_PROBE_TEXTS[0]!r} and "
                f"{_PROBE_TEXTS[1]!r} no distinct word tokens ({ids[0]} / {ids[1]}); the directory's "
                "tokenizer files are broken or missing: copy them from the published checkpoint"
            )

    # ---- text side -------------------------------------------------------------------------------------

    def _token_counts(self, texts: Sequence[str]) -> list[int]:
        return [len(ids) for ids in self.tokenizer(list(texts))["input_ids"]]

    def _text_inputs(self, texts: Sequence[str]) -> dict[str, Any]:
        truncate = self.overlength == "truncate"
        if self.family == "clip":
            kwargs: dict[str, Any] = {"padding": True}
            if truncate:
                kwargs.update(truncation=True, max_length=self.max_text_tokens)
        else:
            kwargs = {"padding": "max_length", "max_length": self.max_text_tokens, "truncation": truncate}
        encoded = self.tokenizer(list(texts), return_tensors="pt", **kwargs)
        return {key: value.to(self.device) for key, value in encoded.items()}

    def _text_forward(self, texts: Sequence[str]) -> Any:
        import torch

        started = time.perf_counter()
        inputs = self._text_inputs(texts)
        self.times.add("text_tokenize", started)
        started = time.perf_counter()
        with torch.inference_mode():
            output = self.model.get_text_features(**inputs)
        features = _pooled(output).float()
        features = torch.nn.functional.normalize(features, dim=-1)
        self._wait_for_device()
        self.times.add("text_forward", started)
        self.text_forwards += 1
        return features

    def encode_texts(
        self, texts: Sequence[str], cache: TextCache | None = None, *, batched: bool = True
    ) -> TextEmbeddings:
        """Embed ``texts`` (empty ones as "an object"): those not in ``cache`` in one forward (``batched``) or
        one forward each (the per-item baseline of the benchmark)."""
        import torch

        scored = tuple(effective_text(text) for text in texts)
        cache = cache if cache is not None else TextCache()
        missing = list(dict.fromkeys(text for text in scored if text not in cache))
        if missing:
            counts = self._token_counts(missing)
            long_flags = [count > self.max_text_tokens for count in counts]
            if any(long_flags):
                self._warn_overlength(max(counts))
            runnable = [
                text for text, long in zip(missing, long_flags, strict=True) if not long or self._truncates
            ]
            rows: dict[str, Any] = {}
            if runnable:
                groups = [runnable] if batched else [[text] for text in runnable]
                for group in groups:
                    features = self._text_forward(group)
                    rows.update({text: features[i] for i, text in enumerate(group)})
            for text, long in zip(missing, long_flags, strict=True):
                row = rows.get(text)
                if row is None:  # over-length under the reference policy: a placeholder, never scored
                    row = torch.zeros(1, device=self.device)
                cache.rows[text] = (row, long)
        over = tuple(cache.rows[text][1] and not self._truncates for text in scored)
        usable = [cache.rows[text][0] for text, long in zip(scored, over, strict=True) if not long]
        features = torch.stack(usable) if usable else None
        return TextEmbeddings(scored, features, over)

    @property
    def _truncates(self) -> bool:
        return self.overlength == "truncate"

    def _warn_overlength(self, longest: int) -> None:
        if self._warned:
            return
        self._warned = True
        if self._truncates:
            action = "it is cut to the model's length (embedding.overlength: truncate)"
        else:
            action = (
                "it scores 0.0 as in the reference, which leans the verdict to No "
                "(set embedding.overlength: truncate to cut it instead)"
            )
        LOG.warning(
            "a description is %d tokens long, more than the %d the %s text model takes: %s; "
            "this warning is given once",
            longest,
            self.max_text_tokens,
            self.model_type,
            action,
        )

    # ---- image side ------------------------------------------------------------------------------------

    def encode_image(self, image: np.ndarray) -> Any:
        """One image forward: the L2-normalised embedding (1 x d, float32) of an RGB / grey / RGBA crop."""
        import torch
        from PIL import Image

        started = time.perf_counter()
        picture = Image.fromarray(np.ascontiguousarray(image)).convert("RGB")
        inputs = self.processor.image_processor(picture, return_tensors="pt", **self._image_kwargs)
        tensors = {
            key: (value.to(self.device, self.dtype) if value.is_floating_point() else value.to(self.device))
            for key, value in inputs.items()
        }
        self.times.add("image_preprocess", started)
        started = time.perf_counter()
        with torch.inference_mode():
            output = self.model.get_image_features(**tensors)
        features = torch.nn.functional.normalize(_pooled(output).float(), dim=-1)
        self._wait_for_device()
        self.times.add("image_forward", started)
        self.image_forwards += 1
        return features

    def _wait_for_device(self) -> None:
        """Let a GPU finish its queued kernels so the stage clock times them, not their launch (the wait
        would otherwise land in whichever later stage first copies a result back)."""
        import torch

        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    def score_features(self, image_features: Any, texts: TextEmbeddings) -> list[float]:
        """The reference's score of the image against every text (over-length texts: 0.0 under ``zero``)."""
        import torch

        started = time.perf_counter()
        values: list[float] = []
        if texts.features is not None:
            with torch.inference_mode():
                cosine = (image_features @ texts.features.T)[0]
                if self.family == "siglip":
                    scale = self.model.logit_scale.float().exp()
                    bias = self.model.logit_bias.float()
                    cosine = torch.sigmoid(cosine * scale + bias).reshape(-1)
            values = [float(v) for v in cosine.cpu().tolist()]
        rows = iter(values)
        scores = [0.0 if long else next(rows) for long in texts.overlength]
        self.times.add("score", started)
        return scores

    def score_image(self, image: np.ndarray, texts: TextEmbeddings) -> list[float]:
        """Scores of one crop against all texts: one image forward."""
        return self.score_features(self.encode_image(image), texts)


def _pooled(output: Any) -> Any:
    """The embedding of a ``get_*_features`` result: transformers 5 returns an output object whose
    ``pooler_output`` is the projected embedding; older versions returned the tensor itself."""
    pooled = getattr(output, "pooler_output", None)
    return output if pooled is None else pooled


__all__ = [
    "EMPTY_TEXT",
    "FAMILY_OF_MODEL_TYPE",
    "OVERLENGTH_POLICIES",
    "EmbeddingModel",
    "TextCache",
    "TextEmbeddings",
    "effective_text",
]
