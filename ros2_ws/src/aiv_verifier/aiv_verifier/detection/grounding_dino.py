"""Grounding DINO (transformers) as the open-vocabulary detector of the crop stage (spec §5.4).

Reference rules: the query is the predicted category, boxes need a score above ``box_threshold`` (0.25) and
their phrase tokens one above ``text_threshold`` (0.25); boxes come back in pixels of the frame that was
passed, whatever its size. Which box is cropped and the view's confidence (best score; nothing found ⇒ full
image, c = 0.1) are decided once, by :func:`aiv_verifier.core.crop.crop_with_detections`: this module only
detects.

Weights come only from a local directory (docs/models.md): the directory is checked before torch or
transformers are imported, the hub is disabled before transformers is imported, only safetensors are loaded,
and the image processor is the PIL one (the default one wants torchvision, which the project does not ship).
Per-stage wall times (preprocess / forward / postprocess) are kept for diagnostics; they never influence a
result.

Batching (``detector.max_batch`` above 1): frames that arrive together -- the views of several episodes in
flight, or the frames waiting in the detector node -- are preprocessed in their callers' threads, gathered for up
to ``detector.batch_window_s`` by a :class:`~aiv_models.batching.RequestBatcher` and run as one forward. Only
frames with the same caption and the same preprocessed size share a forward. Why the size: the processor pads a
batch of differently sized frames to the largest one and hands the model a ``pixel_mask``, but the Swin backbone
does not read that mask, so padding moves the logits of a smaller frame by whole units (measured on the tiny
model: up to 13.6 in the logits and 0.8 in the normalised boxes) -- a different answer, not rounding. Frames of
one camera all resize to one size, so they still batch. Within a group the batched logits and boxes equal the
single-frame ones up to float rounding (float32: measured 4e-6 in the logits, 0 in the boxes; tested within
1e-4). A failed batched forward fails every frame in it; each caller sees the error of its own call.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from aiv_models.batching import RequestBatcher
from aiv_models.local_weights import (
    ModelDirError,
    ModelIdentity,
    check_device_spec,
    check_dtype_spec,
    check_model_dir,
    offline_hub,
)

from ..core.crop import Detection
from ..model_config import DetectorParams

if TYPE_CHECKING:
    import torch

WHAT = "Grounding DINO detector"
EXAMPLE = "IDEA-Research/grounding-dino-tiny"
PARAMETER = "detector.model_dir"
#: The query used when the category is empty (the reference's online fallback).
FALLBACK_QUERY = "object"
#: Words every BERT vocabulary has; a tokenizer that maps all of them to [UNK] cannot ground any query.
_TOKENIZER_PROBE = "a red mug"
STAGES = ("preprocess", "forward", "postprocess")


@dataclass(frozen=True)
class PhraseDetection:
    """One box with the phrase of the query it was grounded to (for labels on topics and debug images)."""

    detection: Detection
    phrase: str


@dataclass(frozen=True)
class StageLatency:
    """Wall seconds of one ``detect`` call per stage. In a batch of ``batch`` frames a frame is charged its own
    preprocessing and an equal share of the batch's forward and postprocessing, so the sums over frames are the
    time the model was busy."""

    preprocess_s: float
    forward_s: float
    postprocess_s: float
    batch: int = 1

    def as_dict(self) -> dict[str, float]:
        return {"preprocess": self.preprocess_s, "forward": self.forward_s, "postprocess": self.postprocess_s}


@dataclass(frozen=True, eq=False)
class PreparedFrame:
    """One frame turned into model inputs in its caller's thread (batch dimension 1, on the model's device).

    ``group`` is what frames must share to run in one forward: the caption and the preprocessed pixel size."""

    inputs: dict[str, Any]
    height: int
    width: int
    caption: str
    preprocess_s: float

    @property
    def group(self) -> Hashable:
        return (self.caption, tuple(self.inputs["pixel_values"].shape[-2:]))


@dataclass(frozen=True, eq=False)
class RawDetections:
    """What one forward returned for its frames, in float32 on the CPU: ``logits`` (frames x queries x text
    positions), ``pred_boxes`` (frames x queries x 4, normalised cx cy w h) and the ``input_ids`` it ran."""

    logits: Any
    pred_boxes: Any
    input_ids: Any


def grounding_query(text: str) -> str:
    """The caption Grounding DINO was trained on: lower case, ending in a period ("red mug" → "red mug.")."""
    query = " ".join(text.split()).lower() or FALLBACK_QUERY
    return query if query.endswith(".") else f"{query}."


def _check_processor_files(root: Path) -> None:
    """A checkpoint also needs its image-processor and tokenizer files; refuse their absence in one line."""
    hint = f"copy the whole checkpoint directory (e.g. {EXAMPLE}), not only its weights"
    if not any((root / name).is_file() for name in ("preprocessor_config.json", "processor_config.json")):
        raise ModelDirError(
            f"{WHAT} model directory {str(root)!r} ({PARAMETER}) has no preprocessor_config.json: {hint}"
        )
    if not any((root / name).is_file() for name in ("tokenizer.json", "vocab.txt")):
        raise ModelDirError(
            f"{WHAT} model directory {str(root)!r} ({PARAMETER}) has no tokenizer (tokenizer.json or "
            f"vocab.txt): {hint}"
        )


def _check_tokenizer(tokenizer: Any, root: str) -> None:
    """Refuse a tokenizer that maps ordinary words to one id: every query would ground to nothing."""
    ids = tokenizer(_TOKENIZER_PROBE, add_special_tokens=False)["input_ids"]
    if len(set(ids)) <= 1 or all(token == tokenizer.unk_token_id for token in ids):
        raise ModelDirError(
            f"{WHAT} tokenizer in {root!r} ({PARAMETER}) maps every word of {_TOKENIZER_PROBE!r} to one id "
            f"{sorted(set(ids))}: its vocabulary is missing or broken; copy the checkpoint's tokenizer files"
        )


def clean_phrase(phrase: str, special_tokens: list[str]) -> str:
    """The matched words without the tokenizer's markers and the caption's period ("red mug. [SEP]" → "red mug")."""
    words = [word for word in phrase.split() if word not in special_tokens]
    return " ".join(words).strip(" .")


def _first_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__


class GroundingDinoDetector:
    """Detects boxes for a text query with a locally stored Grounding DINO (see the module docstring).

    ``detect`` is safe to call from several threads: with ``max_batch`` 1 the calls are serialised, one
    forward at a time; above 1, calls that arrive together share a forward.
    """

    name: ClassVar[str] = "grounding_dino"
    #: Callers on several threads may share one instance (the evaluator then does not serialise its calls).
    thread_safe: ClassVar[bool] = True

    def __init__(
        self,
        model: Any,
        processor: Any,
        identity: ModelIdentity,
        device: torch.device,
        dtype: torch.dtype,
        *,
        box_threshold: float = 0.25,
        text_threshold: float = 0.25,
        max_batch: int = 1,
        batch_window_s: float = 0.01,
    ) -> None:
        check_batching(max_batch, batch_window_s)
        self.model = model
        self.processor = processor
        self.identity = identity
        self.device = device
        self.dtype = dtype
        self.box_threshold = float(box_threshold)
        self.text_threshold = float(text_threshold)
        self.max_batch = int(max_batch)
        self.last_latency: StageLatency | None = None
        self.stage_seconds: dict[str, float] = dict.fromkeys(STAGES, 0.0)
        self.forwards = 0
        self._calls = 0
        self._lock = threading.Lock()
        self._prepare_lock = threading.Lock()
        self._special_tokens = list(getattr(processor.tokenizer, "all_special_tokens", []))
        self._batcher: RequestBatcher[PreparedFrame, tuple[list[PhraseDetection], StageLatency]] | None = (
            RequestBatcher(
                self.run_frames, max_batch=max_batch, window_s=batch_window_s, name="detector-batcher"
            )
            if max_batch > 1
            else None
        )

    @classmethod
    def from_params(cls, params: DetectorParams) -> GroundingDinoDetector:
        """Check everything that can be checked without loading, then load; ModelDirError (one line) if not."""
        return cls.load(
            params.model_dir,
            device=params.device,
            dtype=params.dtype,
            box_threshold=params.box_threshold,
            text_threshold=params.text_threshold,
            max_batch=params.max_batch,
            batch_window_s=params.batch_window_s,
        )

    @classmethod
    def load(
        cls,
        model_dir: str,
        *,
        device: str = "auto",
        dtype: str = "auto",
        box_threshold: float = 0.25,
        text_threshold: float = 0.25,
        max_batch: int = 1,
        batch_window_s: float = 0.01,
    ) -> GroundingDinoDetector:
        for name, value in (
            ("detector.box_threshold", box_threshold),
            ("detector.text_threshold", text_threshold),
        ):
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} = {value}; expected a number in [0, 1]")
        check_batching(max_batch, batch_window_s)
        check_device_spec(device, "detector.device")
        check_dtype_spec(dtype, "detector.dtype")
        identity = check_model_dir(
            model_dir, what=WHAT, model_types=("grounding-dino",), example=EXAMPLE, parameter=PARAMETER
        )
        _check_processor_files(Path(identity.path))
        offline_hub()  # before transformers is first imported: it reads these variables once
        from aiv_models.torch_runtime import resolve_device, resolve_dtype

        torch_device = resolve_device(device, "detector.device")
        torch_dtype = resolve_dtype(dtype, torch_device, "detector.dtype")
        model, processor = _load(identity.path, torch_device, torch_dtype)
        return cls(
            model,
            processor,
            identity,
            torch_device,
            torch_dtype,
            box_threshold=box_threshold,
            text_threshold=text_threshold,
            max_batch=max_batch,
            batch_window_s=batch_window_s,
        )

    @property
    def model_calls(self) -> int:
        """Frames detected (a batch of eight frames is eight calls and one of :attr:`forwards`)."""
        return self._calls

    def detect(self, image: np.ndarray, text: str) -> list[Detection]:
        """Boxes (pixel xyxy in ``image``) for ``text``, best score first; empty when nothing passes."""
        return [found.detection for found in self.detect_phrases(image, text)]

    def detect_phrases(self, image: np.ndarray, text: str) -> list[PhraseDetection]:
        """:meth:`detect` with the phrase each box was grounded to."""
        frame = self.prepare(image, text)
        if self._batcher is not None:
            found, _ = self._batcher.submit(frame, group=frame.group)
        else:
            ((found, _),) = self.run_frames([frame], frame.group)
        return found

    def detect_phrases_batch(
        self, images: Sequence[np.ndarray], text: str
    ) -> list[tuple[list[PhraseDetection], StageLatency]]:
        """:meth:`detect_phrases` of several frames for one caller (the detector node's waiting frames): frames
        of one preprocessed size run together, at most ``max_batch`` per forward; each result comes with its
        frame's latency. A failed forward raises (the caller counts each of its frames as failed)."""
        frames = [self.prepare(image, text) for image in images]
        results: list[tuple[list[PhraseDetection], StageLatency] | None] = [None] * len(frames)
        groups: dict[Hashable, list[int]] = {}
        for index, frame in enumerate(frames):
            groups.setdefault(frame.group, []).append(index)
        for group, indices in groups.items():
            for start in range(0, len(indices), self.max_batch):
                chunk = indices[start : start + self.max_batch]
                for index, result in zip(
                    chunk, self.run_frames([frames[i] for i in chunk], group), strict=True
                ):
                    results[index] = result
        return [result for result in results if result is not None]

    def prepare(self, image: np.ndarray, text: str) -> PreparedFrame:
        """The model inputs of one frame (resized, normalised, the caption tokenised) on the model's device."""
        import torch
        from PIL import Image

        started = time.perf_counter()
        picture = Image.fromarray(np.ascontiguousarray(image)).convert("RGB")
        caption = grounding_query(text)
        # One caller at a time in the processor: a fast tokenizer shared by threads can refuse a concurrent call.
        with self._prepare_lock, torch.inference_mode():
            encoded = self.processor(images=picture, text=caption, return_tensors="pt")
            inputs = {
                key: value.to(self.device, self.dtype) if value.is_floating_point() else value.to(self.device)
                for key, value in encoded.items()
            }
        return PreparedFrame(inputs, picture.height, picture.width, caption, time.perf_counter() - started)

    def forward(self, frames: Sequence[PreparedFrame]) -> RawDetections:
        """One forward over ``frames`` (all of one :attr:`PreparedFrame.group`), outputs in float32 on the CPU."""
        import torch

        if len({frame.group for frame in frames}) != 1:
            raise ValueError("frames of one forward must share their caption and preprocessed size")
        inputs = {key: torch.cat([frame.inputs[key] for frame in frames]) for key in frames[0].inputs}
        with torch.inference_mode():
            outputs = self.model(**inputs)
            if self.device.type == "cuda":
                torch.cuda.synchronize(self.device)  # kernels run asynchronously: time them, not their launch
        self.forwards += 1
        converted = _as_float_cpu(outputs)
        return RawDetections(converted.logits, converted.pred_boxes, inputs["input_ids"].cpu())

    def run_frames(
        self, frames: Sequence[PreparedFrame], group: Hashable = None
    ) -> list[tuple[list[PhraseDetection], StageLatency]]:
        """Forward and postprocess one batch (the :class:`RequestBatcher`'s callable; also the unbatched path)."""
        from transformers.models.grounding_dino.modeling_grounding_dino import (
            GroundingDinoObjectDetectionOutput,
        )

        with self._lock:
            started = time.perf_counter()
            raw = self.forward(frames)
            forwarded = time.perf_counter()
            results = self.processor.post_process_grounded_object_detection(
                GroundingDinoObjectDetectionOutput(
                    logits=raw.logits, pred_boxes=raw.pred_boxes, input_ids=raw.input_ids
                ),
                raw.input_ids,
                threshold=self.box_threshold,
                text_threshold=self.text_threshold,
                target_sizes=[(frame.height, frame.width) for frame in frames],
            )
            found = [self._phrases(result) for result in results]
            finished = time.perf_counter()
            count = len(frames)
            out = []
            for frame, boxes in zip(frames, found, strict=True):
                latency = StageLatency(
                    frame.preprocess_s,
                    (forwarded - started) / count,
                    (finished - forwarded) / count,
                    batch=count,
                )
                self._calls += 1
                self.last_latency = latency
                for stage, seconds in latency.as_dict().items():
                    self.stage_seconds[stage] += seconds
                out.append((boxes, latency))
        return out

    def _phrases(self, result: dict[str, Any]) -> list[PhraseDetection]:
        boxes, scores = result["boxes"].tolist(), result["scores"].tolist()
        # With no box kept, transformers still decodes one (empty) phrase: pair phrases with boxes only.
        phrases = list(result["text_labels"])[: len(boxes)] if boxes else []
        found = [
            PhraseDetection(
                Detection(
                    tuple(float(v) for v in box),  # type: ignore[arg-type]
                    min(1.0, max(0.0, float(score))),
                ),
                clean_phrase(str(phrase), self._special_tokens),
            )
            for box, score, phrase in zip(boxes, scores, phrases, strict=True)
        ]
        found.sort(key=lambda item: item.detection.score, reverse=True)
        return found

    def describe(self) -> dict[str, str]:
        """What diagnostics show about the loaded model, with its mean latency per stage so far."""
        calls = max(1, self._calls)
        return {
            "model_dir": self.identity.path,
            "model_type": self.identity.model_type,
            "fingerprint": self.identity.fingerprint[:16],
            "device": str(self.device),
            "dtype": str(self.dtype).removeprefix("torch."),
            "model_calls": str(self._calls),
            "max_batch": str(self.max_batch),
            "forwards": str(self.forwards),
            **{f"mean_ms.{stage}": f"{self.stage_seconds[stage] / calls * 1000.0:.2f}" for stage in STAGES},
        }


def check_batching(max_batch: int, batch_window_s: float) -> None:
    """Refuse a batch limit below 1 or a negative window in one line naming the parameter."""
    if not isinstance(max_batch, int) or max_batch < 1:
        raise ValueError(f"detector.max_batch = {max_batch!r}; expected an integer >= 1")
    if not batch_window_s >= 0.0:
        raise ValueError(f"detector.batch_window_s = {batch_window_s!r}; expected a number >= 0")


def _as_float_cpu(outputs: Any) -> Any:
    """The logits and boxes post-processing reads, in float32 on the CPU (bfloat16 on a GPU otherwise)."""
    from transformers.models.grounding_dino.modeling_grounding_dino import GroundingDinoObjectDetectionOutput

    return GroundingDinoObjectDetectionOutput(
        logits=outputs.logits.float().cpu(),
        pred_boxes=outputs.pred_boxes.float().cpu(),
        input_ids=outputs.input_ids.cpu() if outputs.input_ids is not None else None,
    )


def _load(path: str, device: torch.device, dtype: torch.dtype) -> tuple[Any, Any]:
    """Model and processor from a checked directory, local files and safetensors only."""
    from transformers import (
        AutoModelForZeroShotObjectDetection,
        AutoTokenizer,
        GroundingDinoImageProcessorPil,
        GroundingDinoProcessor,
    )
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()
    try:
        tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        image_processor = GroundingDinoImageProcessorPil.from_pretrained(path, local_files_only=True)
        model = AutoModelForZeroShotObjectDetection.from_pretrained(
            path, local_files_only=True, use_safetensors=True, dtype=dtype
        )
    except Exception as error:  # whatever a damaged file raises (SafetensorError is none of the usual ones)
        raise ModelDirError(
            f"{WHAT} model directory {path!r} ({PARAMETER}) cannot be loaded: {_first_line(error)}: copy the "
            f"whole checkpoint directory again (e.g. {EXAMPLE})"
        ) from None
    _check_tokenizer(tokenizer, path)
    processor = GroundingDinoProcessor(image_processor=image_processor, tokenizer=tokenizer)
    model.to(device)
    model.eval()
    return model, processor
