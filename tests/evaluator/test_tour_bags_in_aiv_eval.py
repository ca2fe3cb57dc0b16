"""``aiv-eval`` evaluates dataset directories: a params file that asks the simulator for tour bags is refused in
one line, in both modes, before anything runs (the tours become a dataset with ``aiv-bag import``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from aiv_eval.cli import main as aiv_eval
from support.broken_data import eval_params
from support.tiny_dataset import TinyDataset


@pytest.mark.parametrize("mode", ["inprocess", "ros"])
def test_tour_bags_in_a_params_file_are_refused_with_the_way_forward(
    tmp_path: Path, mode: str, capsys: pytest.CaptureFixture[str]
) -> None:
    data = TinyDataset(tmp_path / "pv")
    episode = data.add_episode()
    data.write_descriptions()
    data.write_index("pv_index_all.jsonl", [data.pair(episode)])
    params = eval_params(tmp_path, mode)
    args = ["run", str(params), "--dataset", str(data.root), "--mode", mode]
    assert aiv_eval([*args, "--set", f"offline_sim.tour_bags={tmp_path / 'tour'}"]) == 2
    err = capsys.readouterr().err
    assert "offline_sim.tour_bags" in err and "aiv-bag import" in err
    assert "Traceback" not in err
    assert not (tmp_path / mode / "results.jsonl").exists()
