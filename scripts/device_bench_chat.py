"""On a GPU machine: the local chat model's batched vs one-at-a-time figures at Qwen3-VL-4B's published size.

Run from the repository root where only PyTorch and transformers are installed (the device machine):
    python scripts/device_bench_chat.py --out /tmp/qwen3-vl-4b --tokens 16 --repeats 3
It builds the random-weight model (aiv_models.tiny.qwen_vl_checkpoint.build_full_size_qwen3_vl_4b), then prints
aiv_eval.bench.chat's report for it, and the same for the tiny model on the CPU.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "ros2_ws" / "src" / "aiv_models")]


def _chat_bench():
    # aiv_eval's package imports the evaluation stack; the benchmark module needs only aiv_models.
    path = REPO / "ros2_ws" / "src" / "aiv_eval" / "aiv_eval" / "bench" / "chat.py"
    spec = importlib.util.spec_from_file_location("chat_bench", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["chat_bench"] = module
    spec.loader.exec_module(module)
    return module


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="/tmp/qwen3-vl-4b")
    parser.add_argument("--tokens", type=int, default=16, help="tokens generated per call (forced)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--calls-per-view", type=int, default=8, help="attribute calls of one view")
    parser.add_argument("--skip-tiny", action="store_true")
    args = parser.parse_args()
    from aiv_models.tiny.qwen_vl_checkpoint import build_full_size_qwen3_vl_4b, build_tiny_qwen_vl

    bench = _chat_bench()
    if not args.skip_tiny:
        tiny = build_tiny_qwen_vl(Path(args.out + "-tiny"), family="qwen3_vl")
        result = bench.bench_chat(str(tiny), device="cpu", dtype="float32", repeats=5, forced_tokens=8)
        print("\n".join(result.lines()), flush=True)
    started = time.perf_counter()
    directory = build_full_size_qwen3_vl_4b(args.out, device="cuda")
    print(f"built {directory} in {time.perf_counter() - started:.1f} s", flush=True)
    result = bench.bench_chat(
        str(directory),
        device="cuda",
        dtype="bfloat16",
        repeats=args.repeats,
        forced_tokens=args.tokens,
        calls_per_view=args.calls_per_view,
    )
    print("\n".join(result.lines()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
