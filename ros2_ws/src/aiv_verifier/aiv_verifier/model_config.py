"""The knobs of the model-backed parts: detector, embedding agents, language model, MLLM verifier, trained agent.

Each is a frozen dataclass whose fields say what they mean (``aiv_common.setting_fields``); the verifier's
configuration (:mod:`.verifier_parameters`) nests them under ``detector``, ``embedding``, ``language_model``,
``verifier.mllm`` and ``trained``, so the node, ``aiv-eval`` and bag replay declare and refuse them alike.
Nothing here imports torch: a section only names weights; the backend that uses them imports its libraries when
the factory builds it, and the weight-free default never does.
"""

from __future__ import annotations

from dataclasses import dataclass

from aiv_common.setting_fields import setting
from aiv_models.local_weights import DTYPES

DETECTOR_BACKENDS = ("none", "grounding_dino")
LANGUAGE_MODEL_TRANSPORTS = ("none", "local", "openai")
EMBEDDING_AGGREGATIONS = ("avg", "max", "merged")
EMBEDDING_STOP_RULES = ("final_step", "margin")
EMBEDDING_OVERLENGTH = ("reference", "zero_view", "zero_text", "truncate")

_DEVICE = "auto | cpu | cuda | cuda:N"
_DTYPE = "auto (bfloat16 on a GPU, float32 on a CPU) | float32 | bfloat16 | float16"


@dataclass(frozen=True)
class DetectorParams:
    """The in-verifier open-vocabulary detector (``agent.bbox_mode: detector``) and the detector node."""

    backend: str = setting(
        "none",
        "none | grounding_dino (transformers' Grounding DINO, weights from model_dir)",
        choices=DETECTOR_BACKENDS,
    )
    model_dir: str = setting(
        "",
        "Local directory of a Grounding DINO checkpoint (e.g. IDEA-Research/grounding-dino-tiny, safetensors)",
    )
    device: str = setting("auto", _DEVICE)
    dtype: str = setting("auto", _DTYPE, choices=DTYPES)
    box_threshold: float = setting(0.25, "Minimum box score kept (spec §5.4: 0.25)", minimum=0.0, maximum=1.0)
    text_threshold: float = setting(
        0.25, "Minimum token score for a box's text label (spec §5.4: 0.25)", minimum=0.0, maximum=1.0
    )
    max_batch: int = setting(
        1,
        "Most frames run in one forward (1 = one frame at a time, as the reference). Frames that arrive together "
        "share a forward when their caption and preprocessed size agree; results equal one-at-a-time ones up to "
        "float rounding. aiv-eval bench-models times it",
        minimum=1,
        maximum=256,
    )
    batch_window_s: float = setting(
        0.01,
        "How long the first frame of a batch waits for others to join it (max_batch above 1)",
        minimum=0.0,
        maximum=1.0,
    )


@dataclass(frozen=True)
class EmbeddingParams:
    """The embedding agents ``agent.kind: clip | siglip`` (spec §6): image-text similarity per view."""

    model_dir: str = setting("", "Local directory of a CLIP, SigLIP or SigLIP2 checkpoint (safetensors)")
    device: str = setting("auto", _DEVICE)
    dtype: str = setting("auto", _DTYPE, choices=DTYPES)
    threshold: float = setting(
        -1.0,
        "Yes when the aggregated score is strictly above it; negative: the family's reference value (CLIP 0.25, "
        "SigLIP 0.5)",
    )
    aggregation: str = setting(
        "avg",
        "How the descriptions' scores combine per view: avg | max | merged (one merged description); the "
        "reference's desc_aggregation (across views it is always the mean)",
        choices=EMBEDDING_AGGREGATIONS,
    )
    stop_rule: str = setting(
        "final_step",
        "final_step (answer at the last step, the reference default) | margin (answer once the cross-view score is "
        "stop_margin away from the threshold)",
        choices=EMBEDDING_STOP_RULES,
    )
    stop_margin: float = setting(0.1, "The clip_stop_margin of the margin stop rule", minimum=0.0)
    overlength: str = setting(
        "reference",
        "A description longer than the text model takes: reference (what the reference does with the "
        "checkpoint: every text of the view scores 0.0, or the text is cut where the processor truncates by "
        "default) | zero_view | zero_text (only the long text scores 0.0; not the reference) | truncate (cut to "
        "the model's length). A warning is logged once",
    )
    max_batch: int = setting(
        1,
        "Most crops embedded in one image forward (1 = one crop at a time, as the reference). The crops of "
        "episodes in flight share a forward; scores equal one-at-a-time ones up to float rounding",
        minimum=1,
        maximum=256,
    )
    batch_window_s: float = setting(
        0.01,
        "How long the first crop of a batch waits for others to join it (max_batch above 1)",
        minimum=0.0,
        maximum=1.0,
    )


@dataclass(frozen=True)
class LanguageModelParams:
    """The chat model behind the MLLM verifier, LLM query understanding, LLM-NBV and the trained agent."""

    transport: str = setting(
        "none",
        "none | local (transformers, weights from model_dir) | openai (an OpenAI-compatible HTTP server)",
        choices=LANGUAGE_MODEL_TRANSPORTS,
    )
    model_dir: str = setting(
        "", "local: directory of a Qwen-VL style image-text-to-text checkpoint (safetensors)"
    )
    adapter_dir: str = setting(
        "", 'local: a LoRA adapter directory applied with peft on top of model_dir ("" = none)'
    )
    device: str = setting("auto", f"local: {_DEVICE}")
    dtype: str = setting("auto", f"local: {_DTYPE}", choices=DTYPES)
    max_batch: int = setting(
        1,
        "local: most calls decoded in one padded forward (1 = one call at a time, as the reference; 8 on a GPU "
        "answers a view's attribute calls together: aiv-eval bench-models --vlm times it)",
        minimum=1,
        maximum=256,
    )
    batch_window_s: float = setting(
        0.01,
        "local: how long the first call of a batch waits for others to join it (max_batch above 1)",
        minimum=0.0,
        maximum=1.0,
    )
    base_url: str = setting("", "openai: the server's base URL, e.g. http://127.0.0.1:8000/v1")
    model: str = setting("", "openai: the served model name (or the name a server gives a LoRA adapter)")
    api_key_env: str = setting(
        "OPENAI_API_KEY",
        "openai: the environment variable holding the API key (never a parameter, never logged)",
    )
    connect_timeout_s: float = setting(5.0, "openai: seconds to connect (the reference: 5)", minimum=0.0)
    check_server: bool = setting(
        True,
        "openai: at start-up, ask the server for its models (a model it does not list gets a one-token probe) "
        "and refuse to start when it cannot be reached or does not answer for model (false: start anyway; "
        'failed calls then answer "" and count as Missing)',
    )
    read_timeout_s: float = setting(
        60.0, "openai: seconds to wait for an answer (the reference: 60)", minimum=0.0
    )
    retries: int = setting(
        2,
        "openai: retries after a failed call (the reference: 2); then the answer is empty",
        minimum=0,
        maximum=10,
    )
    max_new_tokens: int = setting(512, "Longest answer generated", minimum=1)
    max_concurrency: int = setting(
        8,
        "Most calls in flight at once (the calls of one view, and of episodes in flight)",
        minimum=1,
        maximum=256,
    )
    cache_dir: str = setting(
        "",
        'Directory of the persistent cache of text-only calls (query understanding, NBV); "" = no cache',
    )
    cache_image_calls: bool = setting(
        False,
        "Also cache calls with images (keyed by a hash of the pixels). Off by default: a benchmark of model "
        "cost must not be answered from disk",
    )


@dataclass(frozen=True)
class MllmVerifierParams:
    """The MLLM per-view verifier (``verifier.backend: mllm``, spec §5.5) on ``language_model.*``."""

    attribute_prompt: str = setting(
        "", 'Prompt file for one attribute ("" = the package\'s own prompts/verify_attribute.txt)'
    )
    description_prompt: str = setting(
        "",
        'Prompt file for a whole description, the direct and merged query modes ("" = the package\'s own '
        "prompts/verify_description.txt)",
    )
    view_prompt: str = setting(
        "",
        'Prompt file of one_call_per_view (every attribute in one call; "" = prompts/verify_view.txt)',
    )
    one_call_per_view: bool = setting(
        False,
        "Not the reference: ask every attribute of a view in one call instead of one call per attribute",
    )


@dataclass(frozen=True)
class TrainedAgentParams:
    """The trained end-to-end agent (``agent.kind: trained``, spec §7) on ``language_model.*``."""

    prompt_file: str = setting(
        "",
        'The prompt text file ("" = the package\'s own words; the released checkpoints were trained on the '
        "reference's wording, so point this at the reference's text for them)",
    )
