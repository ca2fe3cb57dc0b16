"""Grounding DINO (transformers) as the open-vocabulary detector of the crop stage (spec §5.4).

Reference rules: the query is the predicted category, boxes need a score above ``box_threshold`` (0.25) and
their phrase tokens one above ``text_threshold`` (0.25); boxes come back in pixels of the frame that was
passed, whatever its size. Which box is cropped and the view's confidence (best score; nothing found ⇒ full
image, c = 0.1) are decided once, by :func:`aiv_verifier.core.crop.crop_with_detections`: this module only
detects.

Weights come only from a local directory (docs/models-offline.md): the directory is checked before torch or
transformers are imported, the hub is disabled before transformers is imported, only safetensors are loaded,
and the image processor is the PIL one (the default one wants torchvision, which the project does not ship).
Per-stage wall times (preprocess / forward / postprocess) are kept for diagnostics; they never influence a
result.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
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
    """Wall seconds of one ``detect`` call per stage."""

    preprocess_s: float
    forward_s: float
    postprocess_s: float

    def as_dict(self) -> dict[str, float]:
        return {"preprocess": self.preprocess_s, "forward": self.forward_s, "postprocess": self.postprocess_s}


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

    ``detect`` is safe to call from several threads; calls are serialised, one forward at a time.
    """

    name: ClassVar[str] = "grounding_dino"

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
    ) -> None:
        self.model = model
        self.processor = processor
        self.identity = identity
        self.device = device
        self.dtype = dtype
        self.box_threshold = float(box_threshold)
        self.text_threshold = float(text_threshold)
        self.last_latency: StageLatency | None = None
        self.stage_seconds: dict[str, float] = dict.fromkeys(STAGES, 0.0)
        self._calls = 0
        self._lock = threading.Lock()
        self._special_tokens = list(getattr(processor.tokenizer, "all_special_tokens", []))

    @classmethod
    def from_params(cls, params: DetectorParams) -> GroundingDinoDetector:
        """Check everything that can be checked without loading, then load; ModelDirError (one line) if not."""
        return cls.load(
            params.model_dir,
            device=params.device,
            dtype=params.dtype,
            box_threshold=params.box_threshold,
            text_threshold=params.text_threshold,
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
    ) -> GroundingDinoDetector:
        for name, value in (
            ("detector.box_threshold", box_threshold),
            ("detector.text_threshold", text_threshold),
        ):
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} = {value}; expected a number in [0, 1]")
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
        )

    @property
    def model_calls(self) -> int:
        return self._calls

    def detect(self, image: np.ndarray, text: str) -> list[Detection]:
        """Boxes (pixel xyxy in ``image``) for ``text``, best score first; empty when nothing passes."""
        return [found.detection for found in self.detect_phrases(image, text)]

    def detect_phrases(self, image: np.ndarray, text: str) -> list[PhraseDetection]:
        """:meth:`detect` with the phrase each box was grounded to."""
        import torch
        from PIL import Image

        picture = Image.fromarray(np.ascontiguousarray(image)).convert("RGB")
        height, width = picture.height, picture.width
        with self._lock, torch.inference_mode():
            started = time.perf_counter()
            inputs = self.processor(images=picture, text=grounding_query(text), return_tensors="pt")
            inputs = {
                key: value.to(self.device, self.dtype) if value.is_floating_point() else value.to(self.device)
                for key, value in inputs.items()
            }
            prepared = time.perf_counter()
            outputs = self.model(**inputs)
            if self.device.type == "cuda":
                torch.cuda.synchronize(self.device)  # kernels run asynchronously: time them, not their launch
            forwarded = time.perf_counter()
            results = self.processor.post_process_grounded_object_detection(
                _as_float_cpu(outputs),
                inputs["input_ids"].cpu(),
                threshold=self.box_threshold,
                text_threshold=self.text_threshold,
                target_sizes=[(height, width)],
            )[0]
            boxes, scores = results["boxes"].tolist(), results["scores"].tolist()
            # With no box kept, transformers still decodes one (empty) phrase: pair phrases with boxes only.
            phrases = list(results["text_labels"])[: len(boxes)] if boxes else []
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
            finished = time.perf_counter()
            self._calls += 1
            self.last_latency = StageLatency(prepared - started, forwarded - prepared, finished - forwarded)
            for stage, seconds in self.last_latency.as_dict().items():
                self.stage_seconds[stage] += seconds
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
            **{f"mean_ms.{stage}": f"{self.stage_seconds[stage] / calls * 1000.0:.2f}" for stage in STAGES},
        }


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
