"""The verifier node with ``verifier.backend: mllm`` over real DDS, its model behind the OpenAI-compatible server.

Whole episodes: the offline_sim node serves a red-mug and a blue-mug episode, each asked about "a red mug" and
"a blue mug"; the verifier node crops each view, sends the crop over HTTP to the test server, whose trained tiny
VLM answers from the pixels. Every verdict must follow the image (two positives Yes, two negatives No): a
verifier that dropped the image, the prompt's colour or the answer parsing could not get all four right.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from aiv_dataset.layout import PInVerifyDataset
from aiv_eval.run.episode_client import EpisodeRequest, RosEpisodeClient
from aiv_interfaces.msg import Verdict
from aiv_offline_sim.episode_service import pair_key
from support import offline_models, tiny_vlm
from support.colour_dataset import INDEX, build_colour_dataset
from support.llm_server import MODEL_NAME, serving, tiny_vlm_answer

no_network = offline_models.no_network  # fixture
tiny_vlm_dir = tiny_vlm.tiny_vlm_dir  # fixture
pytestmark = [pytest.mark.usefixtures("no_network"), pytest.mark.slow]

REPO_ROOT = Path(__file__).resolve().parents[2]
INSTALL = REPO_ROOT / "ros2_ws" / "install"
SIM_EXECUTABLE = INSTALL / "aiv_offline_sim" / "lib" / "aiv_offline_sim" / "offline_sim"
VERIFIER_EXECUTABLE = INSTALL / "aiv_verifier" / "lib" / "aiv_verifier" / "verifier"
VERIFIER_PARAMS = INSTALL / "aiv_verifier" / "share" / "aiv_verifier" / "config" / "verifier.yaml"


def _args(params: dict[str, object]) -> list[str]:
    argv: list[str] = []
    for name, value in params.items():
        argv += ["-p", f"{name}:={value}"]
    return argv


def test_mllm_verifier_node_verdicts_follow_the_image(
    ros_executor, node_process, tiny_vlm_dir: Path, tmp_path: Path
) -> None:
    root, _ = build_colour_dataset(tmp_path / "data")
    records = PInVerifyDataset(root).read_pair_index(f"val/{INDEX}")
    with serving(tiny_vlm_answer(tiny_vlm_dir)) as server:
        sim = node_process(
            [
                str(SIM_EXECUTABLE),
                "--ros-args",
                *_args({"dataset_root": root, "index_file": f"val/{INDEX}", "privileged_output": "true"}),
            ],
            name="sim",
        )
        params = {
            "verifier.backend": "mllm",
            "language_model.transport": "openai",
            "language_model.base_url": server.url,
            "language_model.model": MODEL_NAME,
            "language_model.max_new_tokens": 16,
        }
        verifier = node_process(
            [str(VERIFIER_EXECUTABLE), "--ros-args", "--params-file", str(VERIFIER_PARAMS), *_args(params)],
            name="verifier",
        )
        client = ros_executor.spin_new("episode_client", RosEpisodeClient)
        client.wait_for_servers(timeout_s=60.0)
        for index, record in enumerate(records):
            run = client.run(EpisodeRequest(index=index))
            assert run.start.episode_key == pair_key(record)
            verdict = run.verdict
            expected = Verdict.DECISION_YES if record.pair_type == "positive" else Verdict.DECISION_NO
            assert verdict.decision == expected, (record.pair_type, record.target_object_id)
            assert verdict.steps == 1  # one attribute answered decisively: a unanimous first-view stop
            (attribute,) = verdict.transcript[0].attributes
            assert attribute.name == "color"
            assert attribute.last_answer == ("Yes" if expected == Verdict.DECISION_YES else "No")
        assert server.requests_served == len(records)  # one call per view and attribute, none retried
        sim.assert_running()
        verifier.assert_running()
