"""The weight-free default never loads a model library: a robot without torch runs it, and nobody pays
torch's import time and memory for a backend they did not configure.

Run in a fresh interpreter, because other tests in the same worker import torch for the model backends.
"""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import json, sys
import aiv_verifier.verifier_node, aiv_eval.cli, aiv_eval.run.in_process
from aiv_verifier.agent.factory import AgentFactory
from aiv_common.setting_tree import nested_config
from aiv_verifier.verifier_parameters import config_parameter_defaults
factory = AgentFactory.from_config(nested_config(config_parameter_defaults()))
session = factory.new_session(["a red mug with a white handle"], episode_key="probe", max_steps=6)
loaded = sorted(name for name in ("torch", "transformers", "peft", "accelerate") if name in sys.modules)
print(json.dumps({"loaded": loaded, "kind": factory.settings.kind, "model_agent": factory.model_agent is None}))
"""


def test_the_default_configuration_imports_no_model_library() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report == {"loaded": [], "kind": "pipeline", "model_agent": True}
