"""The trained agent in a benchmark run, over ROS and in-process: told the index's query category, the same way.

The reference's trained agent is prompted with the ground-truth query category of the index (spec §7.1). The
descriptions here name no category (the rules would answer the fallback "object"), and two of the four pairs
ask about an object of another category than the one in view, so only the index can have put the category in
the prompt. The model is a scripted OpenAI-compatible server that records every prompt: it moves once, then
stops, so each episode takes two steps (a move over ROS included). Both modes must send prompts whose category
line is the pair's ``query_object_category`` and write byte-identical ``results.jsonl`` files.
"""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any

import pytest
from aiv_eval.run.in_process import run_in_process
from aiv_eval.run.ros_mode import RosEvaluation
from aiv_eval.run.spec import EvalSpec
from aiv_models.chat import ChatRequest
from support.embedding_episodes import paint_views, records_of
from support.llm_server import MODEL_NAME, serving
from support.offline_models import no_network  # noqa: F401 - fixture
from support.tiny_dataset import EpisodeSpec, TinyDataset, ring

pytestmark = pytest.mark.usefixtures("no_network")

INDEX_NAME = "pv_index_trained.jsonl"
#: Descriptions without a category word: what the interpreter would find on its own is the fallback class.
TEXTS = {
    "red_mug": ("a red thing", "the red one", "something red"),
    "blue_ball": ("a blue thing", "the blue one", "something blue"),
}
CATEGORY_LINE = re.compile(r"^Category \(must match\): (.*)$", re.MULTILINE)
MOVE = "<answer>\nverification: Unsure\naction: MOVE back\n</answer>"
STOP = "<answer>\nverification: Yes\naction: STOP\n</answer>"

PARAMS = """
offline_sim:
  ros__parameters:
    index_file: val/{index}
verifier:
  ros__parameters:
    agent.kind: trained
    agent.bbox_mode: gt
    language_model.transport: openai
    language_model.base_url: {url}
    language_model.model: {model}
evaluator:
  ros__parameters:
    run_dir: {run_dir}
    server_wait_s: 60.0
    save_crops: false
"""


def mixed_category_dataset(root: Path) -> Path:
    """A red mug and a blue ball, each queried about both objects: 4 pairs, 2 of them neg_diff."""
    dataset = TinyDataset(root)
    episodes = []
    for number, (object_id, category, colour) in enumerate(
        (("red_mug", "mug", "red"), ("blue_ball", "ball", "blue"))
    ):
        episode = dataset.add_episode(
            EpisodeSpec(
                scene=f"0000{number + 1}-trained{category}",
                episode=str(number),
                object_id=object_id,
                category=category,
                views=ring(),
            )
        )
        paint_views(episode.directory, episode.meta, colour, seed=number)
        episodes.append(episode)
    dataset.write_descriptions(texts=TEXTS)
    records = [dataset.pair(episode, query_object_id=query) for episode in episodes for query in TEXTS]
    dataset.write_index(INDEX_NAME, records)
    return root


class ScriptedModel:
    """Move on the first step of an episode, stop with Yes on the next; keeps every prompt it was sent."""

    def __init__(self) -> None:
        self.prompts: list[str] = []
        self._lock = threading.Lock()

    def __call__(self, request: ChatRequest) -> str:
        with self._lock:
            self.prompts.append(request.prompt)
        return STOP if "Previous observations" in request.prompt else MOVE

    def take_categories(self) -> list[str]:
        """The category line of every prompt so far (then forgets them)."""
        with self._lock:
            prompts, self.prompts = self.prompts, []
        return [match.group(1) for prompt in prompts for match in [CATEGORY_LINE.search(prompt)] if match]


def trained_spec(tmp_path: Path, root: Path, url: str, name: str) -> EvalSpec:
    params = tmp_path / f"{name}.yaml"
    params.write_text(PARAMS.format(index=INDEX_NAME, url=url, model=MODEL_NAME, run_dir=tmp_path / name))
    spec = EvalSpec.load(params)
    spec.set_dataset(str(root))
    return spec


def expected_categories(root: Path) -> list[str]:
    """Each pair's index query category, twice (two steps per episode), in index order."""
    lines = (root / "val" / INDEX_NAME).read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["query_object_category"] for line in lines for _step in range(2)]


def _logs(tmp_path: Path, evaluation: RosEvaluation) -> str:
    paths: list[Any] = [tmp_path / "ros-evaluator.log", *(n.log_path for n in evaluation.nodes.values())]
    return "\n".join(p.read_text(errors="replace") for p in paths if p is not None and p.exists())


def test_trained_agent_gets_the_index_category_over_ros_and_in_process_alike(tmp_path: Path) -> None:
    root = mixed_category_dataset(tmp_path / "data")
    expected = expected_categories(root)
    assert expected == ["mug", "mug", "ball", "ball", "mug", "mug", "ball", "ball"]
    model = ScriptedModel()
    with serving(model) as server:
        in_process = run_in_process(trained_spec(tmp_path, root, server.url, "inprocess"))
        assert model.take_categories() == expected
        evaluation = RosEvaluation(
            trained_spec(tmp_path, root, server.url, "ros"), evaluator_output=tmp_path / "ros-evaluator.log"
        )
        result = evaluation.run()
        assert result.evaluator_exit_code == 0, _logs(tmp_path, evaluation)
        assert model.take_categories() == expected

    ros_records = records_of(result.run_dir)
    assert [r["category"] for r in ros_records] == expected[::2]  # the record says which category was used
    assert [r["steps"] for r in ros_records] == [2, 2, 2, 2]
    assert (result.run_dir / "results.jsonl").read_bytes() == (
        in_process.run_dir / "results.jsonl"
    ).read_bytes()
