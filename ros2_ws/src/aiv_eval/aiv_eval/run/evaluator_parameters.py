"""The ``evaluator`` node's parameters: one table, read by the node and by ``aiv-eval``'s params files.

ROS-free, so the evaluation spec fills in and checks exactly what the node declares.
"""

from __future__ import annotations

from aiv_common.parameter_spec import ParameterSpec

EVALUATOR_PARAMETERS: tuple[ParameterSpec, ...] = (
    ParameterSpec(
        "run_dir", "runs/offline_eval", "directory of results.jsonl, metrics and reports (resumable)"
    ),
    ParameterSpec("run_name", "", "name recorded in metrics.json; empty = the run directory's name"),
    ParameterSpec("slice_start", 0, "first index entry to evaluate", minimum=0),
    ParameterSpec("slice_end", -1, "index entry to stop before; -1 = to the end of the index", minimum=-1),
    ParameterSpec(
        "max_attempts", 2, "attempts per episode in total while infrastructure failures repeat", minimum=1
    ),
    ParameterSpec(
        "episodes_in_flight",
        1,
        "episodes run at once in-process (thread pool; records stay in index order); over ROS only 1 "
        "(name several simulator + verifier pairs in `pairs` instead)",
        minimum=1,
        maximum=64,
    ),
    ParameterSpec(
        "pairs",
        "",
        "namespaces of the simulator + verifier pairs this evaluation drives at once, comma-separated (pair0,pair1: "
        "/pair0/offline_sim, /pair0/verifier, ...; relative names are taken in the evaluator's namespace); the next "
        "episode goes to whichever pair is free, records stay in index order and the run is the one a single pair "
        "writes; a pair may join later (another machine); empty = one pair in the evaluator's own namespace",
    ),
    ParameterSpec("save_crops", True, "write the crop of every step as a thumbnail for the reports"),
    ParameterSpec("unsure_as_negative", True, "score an Unsure verdict as No (the benchmark's rule)"),
    ParameterSpec(
        "episode_timeout_s",
        300.0,
        "seconds one episode's verdict may take",
        minimum=0.0,
        exclusive_minimum=True,
    ),
    ParameterSpec(
        "server_wait_s",
        60.0,
        "seconds to wait for the simulator's and verifier's servers",
        minimum=0.0,
        exclusive_minimum=True,
    ),
    ParameterSpec("write_report", True, "write report.md / report.html when the slice is done"),
    ParameterSpec("dataset_root", "", "dataset holding the labels; empty = the simulator's dataset_root"),
    ParameterSpec("simulator_node", "offline_sim", "simulator node whose parameters identify the run"),
    ParameterSpec("verifier_node", "verifier", "verifier node whose agent parameters identify the run"),
    ParameterSpec("start_episode_service", "start_episode", "StartEpisode service of the simulator"),
    ParameterSpec("verify_action", "verify_instance", "VerifyInstance action of the verifier"),
)
