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
length); an empty text becomes "an object". A description longer than the text model takes
(:data:`OVERLENGTH_POLICIES`, ``embedding.overlength``): the reference embeds all texts of a view (the three
descriptions, or the merged one) in one processor call with no truncation flag, so when any of them is too long
the whole call raises, is caught, and *every* text of the view scores 0.0 (the view scores 0.0) -- unless the
checkpoint's processor truncates by default (the NaFlex ``Siglip2Processor``: 64 tokens in transformers 5.x),
where the reference's call succeeds on the cut text. ``"reference"`` (the default) does what the reference does
with the loaded checkpoint: ``"zero_view"`` for CLIP and SigLIP (``model_type`` siglip: the fixed-resolution
SigLIP2 releases such as so400m-patch14-384), ``"truncate"`` where the processor cuts. Not the reference:
``"zero_text"`` scores only the long text 0.0 and the others normally. A warning says what happens, once per
model.

Batching (``max_batch`` above 1, ``embedding.max_batch``): the crops of several episodes in flight are
preprocessed in their callers' threads, gathered for up to ``batch_window_s`` by a
:class:`~aiv_models.batching.RequestBatcher` and embedded in one image forward; each caller then scores its own
row against its own episode's texts. Every family's processor gives every crop the same input shape (CLIP and
SigLIP resize to a fixed square; SigLIP2's NaFlex processor pads every crop to ``max_num_patches`` with an
attention mask, alone or in a batch), so no crop is padded differently in a batch than alone, and the scores
equal one-at-a-time scores up to float rounding (float32: tested within 1e-5). A failed batched forward fails
every crop in it. Text and image forwards of a shared model are serialised by a lock, so sessions on several
threads may share one model.

torch and transformers are imported inside the functions that need them, after :func:`offline_hub`.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .batching import RequestBatcher
from .local_weights import (
    ModelDirError,
    ModelIdentity,
    check_model_dir,
    check_tokenizer_files,
    load_failure,
    offline_hub,
)
from .timing import StageClock

if TYPE_CHECKING:
    import torch

LOG = logging.getLogger(__name__)

#: model_type in config.json -> score family.
FAMILY_OF_MODEL_TYPE = {"clip": "clip", "siglip": "siglip", "siglip2": "siglip"}
#: What a description longer than the text model does (``embedding.overlength``): ``reference`` = the reference's
#: behaviour for the loaded checkpoint (``zero_view``, or ``truncate`` where the processor truncates by default);
#: ``zero_view`` = every text of the view scores 0.0 (the reference's failed call); ``zero_text`` = only the long
#: text scores 0.0 (not the reference); ``truncate`` = cut to the model's length.
OVERLENGTH_POLICIES = ("reference", "zero_view", "zero_text", "truncate")
#: What an empty description is scored as (the reference's substitute).
EMPTY_TEXT = "an object"
#: Two texts every real tokenizer tells apart; a tokenizer that does not is refused at load.
_PROBE_TEXTS = ("a red object", "a blue object")
WHAT = "CLIP / SigLIP embedding model"
EXAMPLE = "openai/clip-vit-large-patch14 or google/siglip2-so400m-patch14-384"


@dataclass(frozen=True)
class TextEmbeddings:
    """The embedded texts of one episode, in the order asked for.

    ``overlength[i]`` says text i is longer than the text model and was not cut; ``zeroed[i]`` that it scores
    0.0 (``zero_text``: the long texts; ``zero_view``: every text once one is long). ``features`` holds one
    L2-normalised row per text that is not zeroed (float32, on the model's device; None when all are).
    ``forwards`` is the number of text forwards this call ran (0 when every text was cached): a session counts
    its own calls from it, which a counter on a model shared by several sessions could not tell it.
    """

    texts: tuple[str, ...]
    features: Any
    overlength: tuple[bool, ...]
    zeroed: tuple[bool, ...]
    forwards: int = 0


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


@dataclass(frozen=True, eq=False)
class PreparedImage:
    """One crop turned into image-model inputs (batch dimension 1, on the model's device) in its caller's
    thread; ``group`` is what crops must share to run in one forward (their input shapes)."""

    tensors: dict[str, Any]

    @property
    def group(self) -> Hashable:
        return tuple(sorted((key, tuple(value.shape)) for key, value in self.tensors.items()))


class EmbeddingModel:
    """A loaded CLIP / SigLIP / SigLIP2 checkpoint with the reference's scoring rule.

    ``text_forwards`` / ``image_forwards`` count model forwards (a batch of texts, or of crops, is one).
    Several threads may share one instance (see the module doc on batching).
    """

    def __init__(
        self,
        model: Any,
        processor: Any,
        identity: ModelIdentity,
        device: torch.device,
        dtype: torch.dtype,
        overlength: str = "reference",
        *,
        max_batch: int = 1,
        batch_window_s: float = 0.01,
    ) -> None:
        if overlength not in OVERLENGTH_POLICIES:
            raise ValueError(f"overlength {overlength!r}: expected one of {list(OVERLENGTH_POLICIES)}")
        check_batching(max_batch, batch_window_s)
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
        #: Tokens the processor itself cuts a text to when called as the reference calls it (None: it does not).
        self.processor_cut = processor_text_cut(processor, self.family, self.max_text_tokens)
        #: The over-length policy in force: zero_view | zero_text | truncate (``reference`` resolved).
        self.overlength_rule = resolve_overlength(overlength, self.processor_cut)
        #: Longest text (tokens) scored as it is; longer ones are cut (truncate) or zeroed.
        self.text_length = (
            self.processor_cut
            if overlength == "reference" and self.processor_cut is not None
            else self.max_text_tokens
        )
        self.times = StageClock()
        self.text_forwards = 0
        self.image_forwards = 0
        self.max_batch = int(max_batch)
        self._warned = False
        #: One forward at a time on the model; the text side (tokenizer state included) is one caller at a time.
        self._forward_lock = threading.Lock()
        self._text_lock = threading.Lock()
        self._clock_lock = threading.Lock()
        self._batcher: RequestBatcher[PreparedImage, Any] | None = (
            RequestBatcher(
                self._image_rows, max_batch=max_batch, window_s=batch_window_s, name="embedding-batcher"
            )
            if max_batch > 1
            else None
        )
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
        overlength: str = "reference",
        parameter: str = "embedding.model_dir",
        max_batch: int = 1,
        batch_window_s: float = 0.01,
    ) -> EmbeddingModel:
        """Check ``model_dir`` and load it (local files, safetensors only); one-line :class:`ModelDirError`
        when it cannot be used."""
        if overlength not in OVERLENGTH_POLICIES:
            raise ModelDirError(
                f"embedding overlength {overlength!r} is not a policy; expected one of {list(OVERLENGTH_POLICIES)}"
            )
        check_batching(max_batch, batch_window_s)
        identity = check_model_dir(
            model_dir,
            what=WHAT,
            model_types=tuple(FAMILY_OF_MODEL_TYPE),
            example=EXAMPLE,
            parameter=parameter,
        )
        check_tokenizer_files(identity.path, what=WHAT, parameter=parameter)
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
        except (
            Exception
        ) as error:  # whatever a damaged file raises (SafetensorError is none of the usual ones)
            raise load_failure(error, what=WHAT, path=identity.path, parameter=parameter) from None
        if (
            getattr(processor, "tokenizer", None) is None
            or getattr(processor, "image_processor", None) is None
        ):
            raise ModelDirError(
                f"{WHAT} in {identity.path!r} ({parameter}) has no complete processor (tokenizer + image "
                "processor): save the checkpoint's processor with `save_pretrained` into the same directory"
            )
        loaded = cls(
            model.to(torch_device).eval(),
            processor,
            identity,
            torch_device,
            torch_dtype,
            overlength,
            max_batch=max_batch,
            batch_window_s=batch_window_s,
        )
        loaded.check_tokenizer()
        LOG.info("embedding model: %s", loaded.describe())
        return loaded

    def describe(self) -> str:
        """One line: family, type, device, dtype, directory, fingerprint and the over-length rule in force
        (logged at load, printed by the benchmark)."""
        dtype = str(self.dtype).replace("torch.", "")
        return (
            f"{self.model_type} ({self.family} scores) on {self.device} in {dtype} from {self.identity.path} "
            f"[{self.identity.fingerprint[:12]}]; over-long description: {self.overlength_rule}"
            f"{' (reference)' if self.overlength == 'reference' else ''}; max batch {self.max_batch}"
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
        truncate = self._truncates
        if self.family == "clip":
            kwargs: dict[str, Any] = {"padding": True}
            if truncate:
                kwargs.update(truncation=True, max_length=self.text_length)
        else:
            kwargs = {"padding": "max_length", "max_length": self.text_length, "truncation": truncate}
        encoded = self.tokenizer(list(texts), return_tensors="pt", **kwargs)
        return {key: value.to(self.device) for key, value in encoded.items()}

    def _text_forward(self, texts: Sequence[str]) -> Any:
        import torch

        started = time.perf_counter()
        inputs = self._text_inputs(texts)
        self.times.add("text_tokenize", started)
        with self._forward_lock:
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
        with self._text_lock:
            return self._encode_texts(texts, cache, batched)

    def _encode_texts(self, texts: Sequence[str], cache: TextCache | None, batched: bool) -> TextEmbeddings:
        import torch

        forwards = 0
        scored = tuple(effective_text(text) for text in texts)
        cache = cache if cache is not None else TextCache()
        missing = list(dict.fromkeys(text for text in scored if text not in cache))
        if missing:
            counts = self._token_counts(missing)
            long_flags = [count > self.text_length for count in counts]
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
                    forwards += 1
                    rows.update({text: features[i] for i, text in enumerate(group)})
            for text, long in zip(missing, long_flags, strict=True):
                row = rows.get(text)
                if row is None:  # over-length under the reference policy: a placeholder, never scored
                    row = torch.zeros(1, device=self.device)
                cache.rows[text] = (row, long)
        over = tuple(cache.rows[text][1] and not self._truncates for text in scored)
        # zero_view: the reference's one call for all texts of the view fails, so every text scores 0.0.
        zeroed = (True,) * len(scored) if self.overlength_rule == "zero_view" and any(over) else over
        usable = [cache.rows[text][0] for text, zero in zip(scored, zeroed, strict=True) if not zero]
        features = torch.stack(usable) if usable else None
        return TextEmbeddings(scored, features, over, zeroed, forwards)

    @property
    def _truncates(self) -> bool:
        return self.overlength_rule == "truncate"

    def _warn_overlength(self, longest: int) -> None:
        if self._warned:
            return
        self._warned = True
        policy = f"embedding.overlength: {self.overlength}"
        if self.overlength_rule == "truncate":
            action = f"it is cut to {self.text_length} tokens ({policy}"
            action += "; the reference's processor cuts it too)" if self.overlength == "reference" else ")"
        elif self.overlength_rule == "zero_view":
            action = (
                f"every description of the query scores 0.0 on every view, as in the reference whose call "
                f"fails, so the verdict is No ({policy}; zero_text or truncate score the others)"
            )
        else:
            action = f"it scores 0.0 and the other descriptions score as usual ({policy}; not the reference)"
        LOG.warning(
            "a description is %d tokens long, more than the %d the %s text model takes: %s; "
            "this warning is given once",
            longest,
            self.text_length,
            self.model_type,
            action,
        )

    # ---- image side ------------------------------------------------------------------------------------

    def prepare_image(self, image: np.ndarray) -> PreparedImage:
        """The image-model inputs of an RGB / grey / RGBA crop (resized, normalised; SigLIP2: patches)."""
        from PIL import Image

        started = time.perf_counter()
        picture = Image.fromarray(np.ascontiguousarray(image)).convert("RGB")
        inputs = self.processor.image_processor(picture, return_tensors="pt", **self._image_kwargs)
        tensors = {
            key: (value.to(self.device, self.dtype) if value.is_floating_point() else value.to(self.device))
            for key, value in inputs.items()
        }
        with self._clock_lock:
            self.times.add("image_preprocess", started)
        return PreparedImage(tensors)

    def encode_images(self, images: Sequence[PreparedImage]) -> Any:
        """One image forward over ``images`` (all of one :attr:`PreparedImage.group`): the L2-normalised
        embeddings, one row per image (n x d, float32)."""
        import torch

        if len({image.group for image in images}) != 1:
            raise ValueError("crops of one forward must share their input shapes")
        tensors = {key: torch.cat([image.tensors[key] for image in images]) for key in images[0].tensors}
        with self._forward_lock:
            started = time.perf_counter()
            with torch.inference_mode():
                output = self.model.get_image_features(**tensors)
            features = torch.nn.functional.normalize(_pooled(output).float(), dim=-1)
            self._wait_for_device()
            self.times.add("image_forward", started)
            self.image_forwards += 1
        return features

    def _image_rows(self, images: Sequence[PreparedImage], group: Hashable = None) -> list[Any]:
        """The batcher's callable: one forward, then each crop's own row (1 x d)."""
        features = self.encode_images(images)
        return [features[index : index + 1] for index in range(len(images))]

    def encode_image(self, image: np.ndarray) -> Any:
        """The L2-normalised embedding (1 x d, float32) of one crop: its own forward, or a share of a batched
        one when ``max_batch`` is above 1 and other crops arrive with it."""
        prepared = self.prepare_image(image)
        if self._batcher is not None:
            return self._batcher.submit(prepared, group=prepared.group)
        return self.encode_images([prepared])

    def _wait_for_device(self) -> None:
        """Let a GPU finish its queued kernels so the stage clock times them, not their launch (the wait
        would otherwise land in whichever later stage first copies a result back)."""
        import torch

        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    def score_features(self, image_features: Any, texts: TextEmbeddings) -> list[float]:
        """The reference's score of the image against every text (0.0 for the texts ``texts.zeroed`` marks)."""
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
        scores = [0.0 if zero else next(rows) for zero in texts.zeroed]
        with self._clock_lock:
            self.times.add("score", started)
        return scores

    def score_image(self, image: np.ndarray, texts: TextEmbeddings) -> list[float]:
        """Scores of one crop against all texts: one image forward."""
        return self.score_features(self.encode_image(image), texts)


def check_batching(max_batch: int, batch_window_s: float) -> None:
    """Refuse a batch limit below 1 or a negative window in one line naming the parameter."""
    if not isinstance(max_batch, int) or max_batch < 1:
        raise ValueError(f"embedding.max_batch = {max_batch!r}; expected an integer >= 1")
    if not batch_window_s >= 0.0:
        raise ValueError(f"embedding.batch_window_s = {batch_window_s!r}; expected a number >= 0")


def processor_text_cut(processor: Any, family: str, max_tokens: int) -> int | None:
    """The length the processor cuts a too-long text to when called as the reference calls it (text with
    CLIP's dynamic or SigLIP's "max_length" padding and no truncation flag), or None when it does not cut.

    The NaFlex ``Siglip2Processor`` of transformers 5.x defaults to truncation at 64 tokens; ``CLIPProcessor`` and
    ``SiglipProcessor`` have no such default, so the reference's call fails on a long text."""
    probe = " ".join(["a"] * (2 * max_tokens + 8))
    padding: bool | str = True if family == "clip" else "max_length"
    try:
        encoded = processor(text=[probe], padding=padding, return_tensors="pt", verbose=False)
        length = int(encoded["input_ids"].shape[-1])
    except (TypeError, ValueError, KeyError, IndexError, AttributeError):
        return None  # a processor that cannot take text alone has no text default to honour
    return length if length <= max_tokens else None


def resolve_overlength(policy: str, processor_cut: int | None) -> str:
    """The rule ``policy`` stands for: ``reference`` is ``truncate`` where the processor cuts by default
    (``processor_cut`` not None), else ``zero_view``; the other policies stand for themselves."""
    if policy not in OVERLENGTH_POLICIES:
        raise ValueError(f"overlength {policy!r}: expected one of {list(OVERLENGTH_POLICIES)}")
    if policy == "reference":
        return "truncate" if processor_cut is not None else "zero_view"
    return policy


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
    "PreparedImage",
    "TextCache",
    "TextEmbeddings",
    "effective_text",
    "processor_text_cut",
    "resolve_overlength",
]
