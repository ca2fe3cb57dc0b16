"""Serve the tests' trained tiny Qwen2.5-VL behind the OpenAI-compatible test server, for plumbing checks.

    PYTHONPATH=tests:$PYTHONPATH python scripts/serve_tiny_vlm.py --model-dir /tmp/tiny-vlm --port 8765

Trains the model into ``--model-dir`` on first use (about a minute on one core; a finished directory carries
the ``TRAINED`` marker and is reused), then answers ``/v1/chat/completions`` on 127.0.0.1 until interrupted.
The tiny model only tells red from blue: it checks that the MLLM verifier, the evidential calibration and the
evaluation run end to end over HTTP (``verifier.backend: mllm``, ``language_model.transport: openai``), not
how good an MLLM is. The model's name on the server is ``tiny-vlm`` (calibration key ``mllm:tiny-vlm``).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model-dir", required=True, help="where the tiny VLM is (or is trained to)")
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        from aiv_models.openai_server import OpenAICompatibleServer
        from support.llm_server import MODEL_NAME, tiny_vlm_answer
        from support.tiny_vlm import MARKER, recipe_fingerprint, train_tiny_vlm
    except ImportError as error:
        print(
            f"serve_tiny_vlm: {error} (after `source .env.sh`, run with PYTHONPATH=tests:$PYTHONPATH)",
            file=sys.stderr,
        )
        return 2
    root = Path(args.model_dir)
    marker = root / MARKER
    if not marker.is_file() or marker.read_text(encoding="utf-8").strip() != recipe_fingerprint():
        train_tiny_vlm(root)
        marker.write_text(recipe_fingerprint() + "\n", encoding="utf-8")
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    server = OpenAICompatibleServer(tiny_vlm_answer(root), model_name=MODEL_NAME, port=args.port)
    with server:
        print(f"serving {MODEL_NAME} from {root} at {server.url}", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            stop.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
