"""An image-only Qwen-VL processor: the work-around for processors that need torchvision (docs/models.md).

``Qwen2_5_VLProcessor`` / ``Qwen3VLProcessor`` insist on a video processor, and every video processor imports
torchvision, which this project does not install; ``AutoProcessor`` on such a directory then silently returns only
the tokenizer and every image is dropped. This processor has just the two parts an image + text chat needs: the
torchvision-free ``Qwen2VLImageProcessorPil`` (its patch size read from the checkpoint's
``preprocessor_config.json``: 14 for Qwen2.5-VL, 16 for Qwen3-VL) and the tokenizer, and it sets the image and
vision start/end tokens and ids itself. Each image becomes ``grid_t*grid_h*grid_w / merge_size**2`` copies of
``<|image_pad|>``, exactly what the model's vision tower emits.

Everything imports transformers inside :func:`load_image_processor_pair`, so importing this module is free.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

#: Model types this processor serves (their vision towers take Qwen2-VL style patches).
QWEN_VL_MODEL_TYPES = ("qwen2_vl", "qwen2_5_vl", "qwen3_vl")


def load_image_text_processor(directory: str | os.PathLike[str]) -> Any:
    """The image-only processor of a local Qwen-VL checkpoint directory (no hub access, no torchvision)."""
    from transformers import AutoTokenizer, ProcessorMixin
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

    class ImageOnlyQwenVLProcessor(ProcessorMixin):
        """Image processor + tokenizer of a Qwen-VL checkpoint; see the module docstring."""

        def __init__(
            self, image_processor: Any = None, tokenizer: Any = None, chat_template: Any = None, **kwargs: Any
        ) -> None:
            self.image_token = getattr(tokenizer, "image_token", None) or "<|image_pad|>"
            self.image_token_id = tokenizer.convert_tokens_to_ids(self.image_token)
            self.video_token = "<|video_pad|>"
            self.video_token_id = tokenizer.convert_tokens_to_ids(self.video_token)
            self.vision_start_token = "<|vision_start|>"
            self.vision_end_token = "<|vision_end|>"
            self.vision_start_token_id = tokenizer.convert_tokens_to_ids(self.vision_start_token)
            self.vision_end_token_id = tokenizer.convert_tokens_to_ids(self.vision_end_token)
            super().__init__(image_processor, tokenizer, chat_template=chat_template)  # type: ignore[no-untyped-call]

        def replace_image_token(self, image_inputs: dict[str, Any], image_idx: int, **kwargs: Any) -> str:
            merge_length = self.image_processor.merge_size**2
            count = int(image_inputs["image_grid_thw"][image_idx].prod()) // merge_length
            return str(self.image_token * count)

    class SharedImageQwenVLImageProcessor(Qwen2VLImageProcessorPil):
        """Processes each distinct image of a call once: a batched view asks all its attribute questions about
        one crop, and resizing + patching that crop for every call was most of a batch's time on a CPU (tiny VLM,
        8 calls: 23 of 36 ms). Images are the same when they are the same object (``encode`` hands one PIL
        image per distinct crop); the patches of a repeated image are copies of its first, so the model's
        inputs are exactly those of processing every image."""

        def preprocess(self, images: Any, *args: Any, **kwargs: Any) -> Any:
            if not isinstance(images, (list, tuple)) or any(isinstance(i, (list, tuple)) for i in images):
                return super().preprocess(images, *args, **kwargs)
            first_of: dict[int, int] = {}
            order = [first_of.setdefault(id(image), len(first_of)) for image in images]
            if len(first_of) == len(images):
                return super().preprocess(images, *args, **kwargs)
            distinct = list({id(image): image for image in images}.values())
            return _repeat_images(super().preprocess(distinct, *args, **kwargs), order)

    root = Path(directory)
    tokenizer = AutoTokenizer.from_pretrained(root, local_files_only=True)
    image_processor = SharedImageQwenVLImageProcessor(**_image_processor_kwargs(root))
    return ImageOnlyQwenVLProcessor(image_processor, tokenizer, chat_template=_chat_template(root, tokenizer))


def _repeat_images(processed: Any, order: list[int]) -> Any:
    """``processed`` (pixel_values: every distinct image's patches in turn; image_grid_thw: one row per distinct
    image) laid out as if image ``order[k]`` had been processed in place ``k``."""
    grids = processed["image_grid_thw"]
    counts = [int(t) * int(h) * int(w) for t, h, w in grids.tolist()]
    starts = [sum(counts[:index]) for index in range(len(counts))]
    pixels = processed["pixel_values"]
    rows = [index for image in order for index in range(starts[image], starts[image] + counts[image])]
    processed["pixel_values"] = pixels[rows]
    processed["image_grid_thw"] = grids[order]
    return processed


def _image_processor_kwargs(root: Path) -> dict[str, Any]:
    """The size / patch / normalisation settings of ``preprocessor_config.json`` that the PIL processor takes."""
    path = root / "preprocessor_config.json"
    if not path.is_file():
        return {}
    config = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(config.get("image_processor"), dict):  # a processor_config.json-style nesting
        config = config["image_processor"]
    keys = (
        "patch_size",
        "merge_size",
        "temporal_patch_size",
        "size",
        "min_pixels",
        "max_pixels",
        "image_mean",
        "image_std",
        "do_resize",
        "do_rescale",
        "rescale_factor",
        "do_normalize",
        "do_convert_rgb",
    )
    return {key: config[key] for key in keys if key in config and config[key] is not None}


def _chat_template(root: Path, tokenizer: Any) -> str | None:
    """The checkpoint's chat template: ``chat_template.jinja``, ``chat_template.json``, else the tokenizer's."""
    jinja = root / "chat_template.jinja"
    if jinja.is_file():
        return jinja.read_text(encoding="utf-8")
    packed = root / "chat_template.json"
    if packed.is_file():
        value = json.loads(packed.read_text(encoding="utf-8")).get("chat_template")
        if isinstance(value, str):
            return value
    template = getattr(tokenizer, "chat_template", None)
    return template if isinstance(template, str) else None
