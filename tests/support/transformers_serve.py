"""``transformers serve`` (transformers 5.x) as a test server: a real third-party OpenAI-compatible server on
127.0.0.1, in its own process, serving a local Qwen-VL directory with the hub off.

Run as a script, this file is the ``transformers`` command line with one change: a Qwen-VL directory's processor
is loaded with :func:`aiv_models.chat.processor.load_image_text_processor`. The stock ``AutoProcessor`` wants
torchvision for the video processor and raises ``ImportError`` while the server preloads the model
(docs/models.md); everything else (routing, ``/v1/models``, request validation, generation) is
transformers' own.

What it does that the project's start-up check has to live with: ``GET /v1/models`` lists the hub cache, never the
model it serves from a directory: HTTP 500 when ``$HF_HOME/hub`` does not exist, ``[]`` when it is empty (the
answer is cached once it succeeds). A server started with a model (``FORCE_MODEL``) answers requests naming
another model with HTTP 400 ("Server is pinned to ...").
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path
from typing import Any

#: What ``transformers serve`` imports besides transformers and torch (the ``serving`` extra).
SERVE_MODULES = ("fastapi", "uvicorn", "openai")
CHAT_POST = '"POST /v1/chat/completions HTTP/1.1"'


def serve_unavailable() -> str:
    """ "" when ``transformers serve`` can run here, else one line saying what is missing."""
    missing = [name for name in SERVE_MODULES if find_spec(name) is None]
    if missing:
        return f"transformers serve needs {', '.join(missing)} (requirements/base.txt, model backends)"
    return ""


@dataclass
class TransformersServer:
    """A started server: ``url`` for ``language_model.base_url``, ``model`` for ``language_model.model``."""

    url: str
    model: str
    hf_home: Path
    log: Path
    process: subprocess.Popen[bytes]

    def chat_posts(self) -> int:
        """Chat completion requests the server has logged (uvicorn's access log, one line each)."""
        return self.log.read_text(encoding="utf-8", errors="replace").count(CHAT_POST)

    def log_tail(self, lines: int = 30) -> str:
        return "\n".join(self.log.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return bool(response.status == 200)
    except (OSError, urllib.error.URLError):
        return False


@contextmanager
def transformers_serve(
    model_dir: Path, hf_home: Path, log: Path, *, start_timeout_s: float = 90.0
) -> Iterator[TransformersServer]:
    """``transformers serve model_dir`` on a free port of 127.0.0.1 (cpu, fp32, one torch thread), hub off and
    ``HF_HOME=hf_home``; stopped (SIGTERM, then SIGKILL) afterwards. Raises with the log's tail if it does not
    come up."""
    import aiv_models

    port = _free_port()
    env = dict(os.environ)
    for name in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "TRANSFORMERS_CACHE"):
        env.pop(name, None)
    package_root = str(Path(aiv_models.__file__).resolve().parents[1])
    env.update(
        HF_HOME=str(hf_home),
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        HF_HUB_DISABLE_TELEMETRY="1",
        HF_HUB_DISABLE_UPDATE_CHECK="1",
        OMP_NUM_THREADS="1",
        PYTHONUNBUFFERED="1",
        PYTHONPATH=os.pathsep.join(filter(None, (package_root, env.get("PYTHONPATH", "")))),
    )
    command = [
        sys.executable,
        __file__,
        "serve",
        str(model_dir),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--device",
        "cpu",
        "--dtype",
        "float32",
    ]
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=hf_home)
    server = TransformersServer(f"http://127.0.0.1:{port}/v1", str(model_dir), hf_home, log, process)
    try:
        deadline = time.monotonic() + start_timeout_s
        while not _healthy(f"http://127.0.0.1:{port}/health"):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(
                    f"transformers serve did not come up on port {port} "
                    f"(exit {process.poll()}):\n{server.log_tail()}"
                )
            time.sleep(0.2)
        yield server
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=15)


def _model_type(config: Path) -> object:
    return json.loads(config.read_text(encoding="utf-8")).get("model_type")


def _main() -> None:
    """The ``transformers`` CLI, with Qwen-VL processors loaded without torchvision."""
    from aiv_models.chat.processor import QWEN_VL_MODEL_TYPES, load_image_text_processor
    from transformers.cli.serving import model_manager
    from transformers.cli.transformers import main

    stock = model_manager.ModelManager._load_processor

    def load_processor(self: Any, model_id_and_revision: str, gguf_file: str | None = None) -> Any:
        model_id = model_id_and_revision.split("@", 1)[0]
        config = Path(model_id) / "config.json"
        if gguf_file is None and config.is_file() and _model_type(config) in QWEN_VL_MODEL_TYPES:
            return load_image_text_processor(model_id)
        return stock(self, model_id_and_revision, gguf_file=gguf_file)

    model_manager.ModelManager._load_processor = load_processor
    sys.argv = ["transformers", *sys.argv[1:]]
    main()


if __name__ == "__main__":
    # Run as a script, this folder is sys.path[0]: keep its modules from shadowing anything transformers imports.
    if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
        sys.path.pop(0)
    _main()
