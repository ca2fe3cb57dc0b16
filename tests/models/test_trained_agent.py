"""The trained end-to-end agent (spec §7.1-7.2): prompt assembly, reply parsing, action mapping, whole episodes.

The unit under test is everything around the model call, so a scripted ``LanguageModel`` that returns fixed
strings (and records what it was asked) stands in for the model here; the real tiny model runs in
``test_trained_agent_tiny_vlm.py``. Every line of the §7.1 user message and every §7.2 mapping rule is pinned.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest
from aiv_models.chat import ChatModel, ChatRequest, ChatResult
from aiv_verifier.agent.factory import AgentFactory, ConfigError
from aiv_verifier.agent.settings import AgentSettings
from aiv_verifier.agent.steps import ViewFrame
from aiv_verifier.agent.trained import TrainedAgent, TrainedSession
from aiv_verifier.agent.trained_parse import ActionKind, map_action, move_direction, parse_reply
from aiv_verifier.agent.trained_prompt import DEFAULT_PROMPT_FILE, TrainedPromptTemplate
from aiv_verifier.core.types import Decision
from aiv_verifier.detection.base import BoxMode, crop_view
from aiv_verifier.model_config import TrainedAgentParams
from aiv_verifier.query.types import QueryMode, QuerySpec
from support import offline_models, synthetic

no_network = offline_models.no_network  # fixtures used below
micro_root = synthetic.micro_root

DESCRIPTIONS = ("a red mug with a white handle", "a mug with a floral print", "a red ceramic cup")
SYSTEM = (
    "You are a robot walking around one object to find out whether it is the object a person described. At "
    "every step you are shown two pictures, the whole scene from where you stand and a close-up of the "
    "candidate object. Check the object's attributes, then say what to do next."
)
FIRST_PROMPT = """Decide whether the object in the close-up is the object described below.

Target: "a red mug with a white handle; a mug with a floral print; a red ceramic cup"
Category (must match): mug
Current sector: front (0°)
Visited sectors: [front]
Remaining budget: 5 steps
Available sectors: [front-left, back-left, back, back-right, front-right]

Look at the scene (Image 1) and the close-up (Image 2):
1. Is this the described object? Check the attributes one by one.
2. Your action: STOP (when you are sure) or MOVE <sector> (when another view is needed)"""


def answer(verification: str, action: str) -> str:
    return (
        f"<think>\nlooking\n</think>\n\n<answer>\nverification: {verification}\naction: {action}\n</answer>"
    )


class Scripted:
    """A ``LanguageModel`` answering from a list (or a function of the prompt), recording every call."""

    def __init__(self, replies: Sequence[str] | Callable[[str, Sequence[np.ndarray]], str]) -> None:
        self.replies = replies
        self.calls: list[tuple[str, list[np.ndarray]]] = []
        self._lock = threading.Lock()

    def generate(self, prompt: str, images: Sequence[np.ndarray]) -> str:
        with self._lock:
            self.calls.append((prompt, list(images)))
            position = len(self.calls) - 1
        if callable(self.replies):
            return self.replies(prompt, images)
        return self.replies[position]


def query(category: str = "mug") -> QuerySpec:
    return QuerySpec(DESCRIPTIONS, QueryMode.ATTRIBUTE, category, "hint", (), "rules")


def session(model: object, max_steps: int = 6, prompt_file: str = "") -> TrainedSession:
    agent = TrainedAgent.from_params(TrainedAgentParams(prompt_file=prompt_file), model, AgentSettings())  # type: ignore[arg-type]
    return agent.new_session(query(), episode_key="ep", max_steps=max_steps)


def frame(
    step: int,
    sector: int,
    *,
    failed: bool = False,
    visible: bool | None = True,
    box: tuple[float, float, float, float] | None = (10.0, 20.0, 30.0, 60.0),
) -> ViewFrame:
    image = np.full((80, 48, 3), 40 + sector, dtype=np.uint8)
    return ViewFrame(
        image=image,
        step_count=step,
        current_sector=sector,
        navigation_failed=failed,
        image_key=sector,
        capture_tag=f"s{2 * sector}_far",
        gt_box=box,
        target_visible=visible,
    )


def user_part(prompt: str) -> str:
    """The user message of a plain-model call (the system text comes first, then a blank line)."""
    assert prompt.startswith(SYSTEM + "\n\n")
    return prompt[len(SYSTEM) + 2 :]


# ---- §7.1 prompt assembly -----------------------------------------------------------------------------------


def test_first_step_prompt_has_every_line_of_the_user_message_in_order() -> None:
    model = Scripted([answer("Yes", "STOP")])
    session(model).observe(frame(0, 2))
    prompt, images = model.calls[0]
    assert user_part(prompt) == FIRST_PROMPT
    # Images: the scene first, then the crop of the GT box by the crop rules of spec §5.4.
    shown = frame(0, 2)
    crop, _ = crop_view(shown.image, BoxMode.GT, gt_box=shown.gt_box)
    assert len(images) == 2
    assert np.array_equal(images[0], shown.image) and np.array_equal(images[1], crop.image)


def test_history_and_every_direction_are_relative_to_the_current_pose() -> None:
    model = Scripted([answer("Unsure", "MOVE back-left"), answer("No", "MOVE fr"), answer("Yes", "STOP")])
    agent = session(model)
    first = agent.observe(frame(0, 2))
    assert first.move is not None and (first.move.direction, first.move.target_index) == ("back-left", 4)
    second = agent.observe(frame(1, 4))
    assert second.move is not None and (second.move.direction, second.move.target_index) == ("front-right", 3)
    agent.observe(frame(2, 3))
    prompt = user_part(model.calls[1][0])
    # Visited sectors 2 and 4, by virtual index, named from sector 4; available in the names' order.
    assert "Visited sectors: [back-right, front]\n" in prompt
    assert "Remaining budget: 4 steps\n" in prompt
    assert "Available sectors: [front-left, back-left, back, front-right]\n" in prompt
    assert prompt.endswith(
        "(when another view is needed)\n\nPrevious observations:\n"
        "- Step 1 (back-right): Verification=Unsure, Action=MOVE front"
    )
    third = user_part(model.calls[2][0])
    assert "Visited sectors: [front-right, front, front-left]\n" in third  # sectors 2, 3, 4 seen from 3
    assert "Remaining budget: 3 steps\n" in third
    assert third.endswith(
        "Previous observations:\n"
        "- Step 1 (front-right): Verification=Unsure, Action=MOVE front-left\n"
        "- Step 2 (front-left): Verification=No, Action=MOVE front"
    )


def test_a_refused_move_is_named_in_one_warning_line_and_its_target_counts_as_visited() -> None:
    model = Scripted([answer("Unsure", "MOVE back"), answer("Yes", "STOP")])
    agent = session(model)
    agent.observe(frame(0, 1))
    step = agent.observe(frame(1, 1, failed=True, visible=False))  # refused: same view again
    assert step.duplicate_view
    prompt = user_part(model.calls[1][0])
    assert "Visited sectors: [front, back]\n" in prompt  # sector 1 and the refused target 4
    assert "Available sectors: [front-left, back-left, back-right, front-right]\n" in prompt
    # The failure wins over the trap flag: at most one warning, right after the instructions.
    assert prompt.count("Warning:") == 1
    assert (
        "(when another view is needed)\n"
        'Warning: the sector "back" you asked for last cannot be reached, so you are still at the same place.'
        "\n\nPrevious observations:\n- Step 1 (front): Verification=Unsure, Action=MOVE back"
    ) in prompt


def test_a_trap_view_gets_the_visibility_warning_and_a_clear_view_none() -> None:
    model = Scripted([answer("Unsure", "MOVE back"), answer("Yes", "STOP")])
    agent = session(model)
    agent.observe(frame(0, 0, visible=True))
    agent.observe(frame(1, 3, visible=False, box=None))
    assert "Warning" not in model.calls[0][0]
    assert user_part(model.calls[1][0]).endswith(
        "(when another view is needed)\n"
        "Warning: from this side the target object cannot be seen clearly.\n\n"
        "Previous observations:\n- Step 1 (back): Verification=Unsure, Action=MOVE front"
    )


def test_available_sectors_read_none_when_every_direction_is_used() -> None:
    moves = ["front-left", "front-left", "front-left", "front-left", "front-left"]
    model = Scripted([answer("Unsure", f"MOVE {name}") for name in moves] + [answer("Yes", "STOP")])
    agent = session(model, max_steps=7)
    for step in range(6):
        agent.observe(frame(step, step))
    assert "Available sectors: [none]\n" in model.calls[5][0]
    assert (
        "Visited sectors: [front-left, back-left, back, back-right, front-right, front]\n"
        in model.calls[5][0]
    )


def test_a_chat_model_gets_the_system_message_as_its_own_turn() -> None:
    class Recording:
        parallel = False
        identity: ClassVar[dict[str, str]] = {}

        def __init__(self) -> None:
            self.requests: list[ChatRequest] = []

        def complete(self, request: ChatRequest, max_new_tokens: int) -> ChatResult:
            self.requests.append(request)
            return ChatResult(answer("Yes", "STOP"))

        def close(self) -> None:
            pass

    transport = Recording()
    session(ChatModel(transport)).observe(frame(0, 2))
    (request,) = transport.requests
    assert request.system == SYSTEM
    assert request.prompt == FIRST_PROMPT
    assert len(request.images) == 2


def test_the_prompt_file_is_a_parameter_and_a_broken_one_is_refused(tmp_path: Path) -> None:
    text = DEFAULT_PROMPT_FILE.read_text(encoding="utf-8").replace(
        "Decide whether the object", "REFERENCE WORDING: decide whether the object"
    )
    custom = tmp_path / "reference.txt"
    custom.write_text(text, encoding="utf-8")
    model = Scripted([answer("Yes", "STOP")])
    session(model, prompt_file=str(custom)).observe(frame(0, 2))
    assert user_part(model.calls[0][0]).startswith("REFERENCE WORDING: decide whether the object")

    broken = tmp_path / "broken.txt"
    broken.write_text(text.replace("[[warning_trap]]", "[[warning_trapp]]"), encoding="utf-8")
    with pytest.raises(ValueError, match=r"unknown section \[\[warning_trapp\]\]"):
        TrainedPromptTemplate.load(broken)
    no_target = tmp_path / "no_target.txt"
    no_target.write_text(text.replace("{target}", "the target"), encoding="utf-8")
    with pytest.raises(ValueError, match=r"no \{target\} slot"):
        TrainedPromptTemplate.load(no_target)
    with pytest.raises(ValueError, match=r"trained.prompt_file: .*not found: .*missing.txt"):
        session(model, prompt_file=str(tmp_path / "missing.txt"))


# ---- §7.2 parsing and action mapping ------------------------------------------------------------------------


def test_structured_answer_block_lines_with_any_key_case() -> None:
    reply = parse_reply(
        "<think>\nverification: No\n</think>\n<answer>\nVerification: Yes\nACTION: MOVE back\n</answer>"
    )
    assert (reply.verification, reply.action, reply.structured) == ("Yes", "MOVE back", True)
    missing = parse_reply("<answer>\nverification: yes\n</answer>")
    assert (missing.verification, missing.action) == ("yes", "STOP")  # default action
    assert parse_reply("<answer>\naction: MOVE back\n</answer>").verification == "Unsure"  # default verdict


def test_fuzzy_parsing_without_an_answer_block() -> None:
    reply = parse_reply(
        "The close-up matches the target so far, but I should MOVE Back-Left to check the print."
    )
    assert (reply.verification, reply.action, reply.structured) == ("Yes", "MOVE back-left", False)
    # The first MOVE <direction> or STOP wins; mismatch phrases are read before match phrases.
    reply = parse_reply("It does not match the target. STOP now; no need to MOVE front-right.")
    assert (reply.verification, reply.action) == ("No", "STOP")
    reply = parse_reply("MOVE front-right, the handle is hidden")
    assert (reply.verification, reply.action) == ("Unsure", "MOVE front-right")
    assert parse_reply("no idea").action == "STOP" and parse_reply("").verification == "Unsure"


@pytest.mark.parametrize(
    ("argument", "direction"),
    [
        ("back-left", "back-left"),
        ("Front-Right", "front-right"),
        ("to the back-right side", "back-right"),  # longest contained name
        ("back", "back"),
        ("left", "front-left"),
        ("right", "front-right"),
        ("fl", "front-left"),
        ("fr", "front-right"),
        ("bl", "back-left"),
        ("br", "back-right"),
        ("", "front"),  # bare MOVE: stay
        ("somewhere else", "front"),
    ],
)
def test_move_directions(argument: str, direction: str) -> None:
    assert move_direction(argument) == direction


def test_action_mapping_rules() -> None:
    def mapped(verification: str, action: str, remaining: int = 3):
        from aiv_verifier.agent.trained_parse import ParsedReply

        return map_action(ParsedReply(verification, action, True), remaining)

    stop = mapped("Yes", "STOP")
    assert (stop.kind, stop.decision, stop.step_prediction) == (ActionKind.STOP, Decision.YES, Decision.YES)
    assert mapped("Unsure", "STOP").decision is Decision.NO  # Unsure answers No
    assert mapped("nope", "stop because sure").decision is Decision.NO  # prefix rules
    move = mapped("Unsure", "MOVE fr")
    assert (move.kind, move.decision, move.direction) == (ActionKind.MOVE, Decision.UNSURE, "front-right")
    assert move.step_prediction is Decision.NO and mapped("Yes", "MOVE back").step_prediction is Decision.YES
    assert mapped("Yes", "MOVE").direction == "front"  # bare MOVE stays
    assert mapped("No", "move left").direction == "front-left"
    unknown = mapped("Yes", "JUMP over it")
    assert (unknown.kind, unknown.decision, unknown.step_prediction) == (
        ActionKind.UNKNOWN,
        Decision.NO,
        Decision.NO,
    )
    # The last step answers whatever the action: the verification, Unsure as No.
    assert mapped("Yes", "MOVE back", remaining=0).decision is Decision.YES
    final = mapped("Unsure", "MOVE back", remaining=0)
    assert (final.kind, final.decision, final.final_step) == (ActionKind.STOP, Decision.NO, True)


def test_session_steps_moves_and_summary_facts() -> None:
    model = Scripted([answer("Unsure", "MOVE"), answer("Unsure", "MOVE left"), answer("Yes", "MOVE back")])
    agent = session(model, max_steps=3)
    stay = agent.observe(frame(0, 5))
    assert stay.move is not None and (stay.move.direction, stay.move.target_index) == ("front", 5)
    assert stay.move.reason == "model action 'MOVE'"
    left = agent.observe(frame(1, 5))
    assert left.move is not None and (left.move.direction, left.move.target_index) == ("front-left", 0)
    last = agent.observe(frame(2, 0))  # the budget's last step: answers with the verification
    assert (last.decision, last.stop_reason, last.move) == (Decision.YES, "final", None)
    assert [row.last_answer for step in agent.steps for row in step.attributes] == ["Unsure", "Unsure", "Yes"]
    assert agent.final_decision is Decision.YES and agent.confidence() == 1.0
    assert agent.visited_order == (5, 0) and agent.model_calls == {"trained_agent": 3}
    with pytest.raises(RuntimeError, match="already decided"):
        agent.observe(frame(3, 0))


def test_an_unreadable_or_failed_call_answers_no() -> None:
    def broken(prompt: str, images: Sequence[np.ndarray]) -> str:
        raise ConnectionError("server gone")

    step = session(Scripted(broken)).observe(frame(0, 2))
    assert (step.decision, step.stop_reason, step.step_prediction) == (Decision.NO, "early_exit", Decision.NO)
    unknown = session(Scripted([answer("Yes", "JUMP")]))
    assert unknown.observe(frame(0, 2)).decision is Decision.NO and unknown.confidence() == 0.0


def test_the_factory_builds_the_trained_agent_only_with_a_language_model() -> None:
    config = {"agent": {"kind": "trained"}}
    factory = AgentFactory.from_config(config, language_model=Scripted([answer("No", "STOP")]))
    started = factory.new_session(DESCRIPTIONS, episode_key="k", max_steps=6, category_hint="mug")
    assert isinstance(started, TrainedSession) and started.query.category == "mug"
    with pytest.raises(ConfigError, match=r"needs language_model\.transport"):
        AgentFactory.from_config(config)


# ---- whole episodes in-process through aiv_eval --------------------------------------------------------------

TRAINED_PARAMS = """
offline_sim:
  ros__parameters:
    index_file: val/pv_index_all.jsonl
verifier:
  ros__parameters:
    agent.kind: trained
evaluator:
  ros__parameters:
    run_dir: {run_dir}
    save_crops: false
"""


def episode_model(prompt: str, images: Sequence[np.ndarray]) -> str:
    """Deterministic and stateless (episodes in flight call it from several threads): move twice, then
    answer from the crop's pixels, or No after a refused move."""
    if "cannot be reached" in prompt:
        return answer("No", "STOP")
    if prompt.count("- Step ") < 2:
        return answer("Unsure", "MOVE back" if "Previous observations" not in prompt else "MOVE fl")
    return answer("Yes" if hashlib.sha256(images[1].tobytes()).digest()[0] % 2 else "No", "STOP")


def trained_spec(tmp_path: Path, root: Path, name: str, *overrides: str):
    from aiv_eval.run.spec import EvalSpec

    params = tmp_path / f"{name}.yaml"
    params.write_text(TRAINED_PARAMS.format(run_dir=tmp_path / name))
    spec = EvalSpec.load(params, overrides)
    spec.set_dataset(str(root))
    return spec


def test_whole_episodes_in_process_and_in_flight_give_identical_records(
    tmp_path: Path, micro_root: Path
) -> None:
    from aiv_eval.run.in_process import run_in_process

    model = Scripted(episode_model)
    one = run_in_process(trained_spec(tmp_path, micro_root, "one"), language_model=model).run_dir
    records = [json.loads(line) for line in (one / "results.jsonl").read_text().splitlines()]
    assert len(records) == 12 and all(record["status"] == "ok" for record in records)
    for record in records:
        steps = record["transcript"]
        assert record["model_calls"] == {"trained_agent": len(steps)}
        assert [step["attributes"][0]["name"] for step in steps] == ["verification"] * len(steps)
        assert steps[0]["nav_rel"] == "back" and steps[-1]["nav_rel"] is None
        assert record["prediction"] in ("Yes", "No")
    assert {record["prediction"] for record in records} == {"Yes", "No"}
    assert sum(len(record["transcript"]) for record in records) == len(model.calls)

    many = run_in_process(
        trained_spec(tmp_path, micro_root, "many", "evaluator.episodes_in_flight=4"), language_model=model
    ).run_dir
    assert (many / "results.jsonl").read_bytes() == (one / "results.jsonl").read_bytes()


def test_whole_episodes_over_the_openai_transport(tmp_path: Path, micro_root: Path, no_network: None) -> None:
    from aiv_eval.run.in_process import run_in_process
    from aiv_models.openai_server import OpenAICompatibleServer

    seen: list[ChatRequest] = []

    def respond(request: ChatRequest) -> str:
        seen.append(request)
        return episode_model(request.prompt, request.images)

    with OpenAICompatibleServer(respond, model_name="pv-sft-gspo") as server:
        overrides = (
            "verifier.language_model.transport=openai",
            f"verifier.language_model.base_url={server.url}",
            "verifier.language_model.model=pv-sft-gspo",
            "evaluator.slice_end=4",
            "evaluator.episodes_in_flight=2",
        )
        run_dir = run_in_process(trained_spec(tmp_path, micro_root, "http", *overrides)).run_dir
    records = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    assert len(records) == 4 and all(record["status"] == "ok" for record in records)
    assert len(seen) == sum(len(record["transcript"]) for record in records)
    assert all(request.system == SYSTEM and len(request.images) == 2 for request in seen)
    assert all(request.prompt.startswith("Decide whether the object") for request in seen)


def test_episodes_in_flight_is_refused_where_it_is_not_safe(tmp_path: Path, micro_root: Path) -> None:
    from aiv_eval.run.in_flight import in_flight_problem
    from aiv_eval.run.spec import SpecError

    with pytest.raises(SpecError, match="episodes_in_flight"):
        trained_spec(tmp_path, micro_root, "bad", "evaluator.episodes_in_flight=0")
    # Every agent kind shares its models across threads in-process (the embedding agents included); over ROS
    # one simulator + verifier pair serves one episode at a time.
    for kind in ("pipeline", "trained", "clip", "siglip"):
        assert in_flight_problem(2, kind, "inprocess") is None
        assert "only in-process" in str(in_flight_problem(2, kind, "ros"))
    assert "agent.kind" in str(in_flight_problem(2, "unknown", "inprocess"))
