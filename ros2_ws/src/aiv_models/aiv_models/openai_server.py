"""A small OpenAI-compatible chat server on 127.0.0.1 around any answer function (tests and benchmarks).

Why it exists: vLLM cannot be installed usefully on the CPU machines, and ``transformers serve`` silently drops a
Qwen-VL request's image without torchvision (docs/models.md). This standard-library server decodes the
``image_url`` data URLs itself and hands the request to a pluggable answer function, so the image really reaches
the model, and the HTTP transport, its retries and timeouts run for real.

API::

    from aiv_models.openai_server import OpenAICompatibleServer, Fault, transformers_answer

    server = OpenAICompatibleServer(transformers_answer("/tmp/tiny-vlm"), model_name="tiny-vlm").start()
    server.url            # "http://127.0.0.1:<port>/v1": give it to language_model.base_url
    ...
    server.stop()         # or: with OpenAICompatibleServer(...) as server: ...

Constructor options:

``answer``        ``Callable[[ChatRequest], str]``: gets the decoded request (prompt, system text, images as
                  H×W×3 uint8 arrays, ``max_new_tokens`` from ``max_tokens``) and returns the answer text; an
                  exception becomes HTTP 500. :func:`transformers_answer` wraps a local transformers checkpoint.
``model_name``    what ``/v1/models`` lists; requests naming another model get HTTP 404, like vLLM.
``latency_s``     a fixed extra latency per call (slept in the request's own thread, so concurrent calls overlap
                  as on a batching server): lets a benchmark measure orchestration against a known model cost.
``replay``        compute each distinct request's answer once (keyed by prompt, system text, pixels and
                  ``max_tokens``) and replay it afterwards; :meth:`OpenAICompatibleServer.recorded` returns the
                  answers and ``preload=`` seeds them, so a benchmark can time orchestration alone.
``api_key``       when set, a request without ``Authorization: Bearer <api_key>`` gets HTTP 401.

Requests are served in parallel (``ThreadingHTTPServer``: one thread per connection); ``requests_served`` counts
chat requests as they arrive (faulted ones included) and ``peak_in_flight`` the most handled at once, so a
benchmark or a test can tell how many overlapped; ``answers_computed`` counts calls of the answer function.
Endpoints: ``POST /v1/chat/completions`` and ``GET /v1/models``. Only ``data:image/...;base64`` image URLs are
accepted: the server never fetches anything.

Fault injection, for the tests named for it: :meth:`OpenAICompatibleServer.inject` queues :class:`Fault` items, and
each incoming chat request takes the next one: an HTTP error status, a stall (no answer until the client's read
timeout fires; the stall ends at ``stop()``), a dropped connection, or a malformed body.
:meth:`OpenAICompatibleServer.fail_after` makes a server that dies mid-run: the first N chat requests are
answered, every later one takes the given fault.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .chat.images import ImageError, from_data_url, pixel_digest
from .chat.types import ChatRequest

AnswerFunction = Callable[[ChatRequest], str]
FAULT_KINDS = ("status", "stall", "drop", "malformed")
_MAX_BODY = 64 * 1024 * 1024


@dataclass(frozen=True)
class Fault:
    """One injected failure: ``status`` (HTTP ``status``), ``stall`` (hold the request ``seconds`` or until
    stop), ``drop`` (close the connection without an answer), ``malformed`` (HTTP 200 with a body that is not a
    chat completion)."""

    kind: str
    status: int = 500
    seconds: float = 30.0

    def __post_init__(self) -> None:
        if self.kind not in FAULT_KINDS:
            raise ValueError(f"fault kind must be one of {FAULT_KINDS}, got {self.kind!r}")


class RequestError(ValueError):
    """A chat/completions body the server cannot answer (HTTP 400)."""


def parse_chat_request(body: Mapping[str, Any]) -> ChatRequest:
    """The :class:`ChatRequest` of an OpenAI chat/completions body (system messages joined, user parts in order).

    Text parts of every user message are joined with newlines, images are decoded from data URLs in order.
    """
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise RequestError("'messages' must be a non-empty list")
    system: list[str] = []
    texts: list[str] = []
    images = []
    for message in messages:
        if not isinstance(message, dict):
            raise RequestError("every message must be an object")
        role, content = message.get("role"), message.get("content")
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(parts, list):
            raise RequestError(f"{role} message content must be a string or a list of parts")
        for part in parts:
            if not isinstance(part, dict):
                raise RequestError("content parts must be objects")
            if part.get("type") == "text":
                (system if role == "system" else texts).append(str(part.get("text", "")))
            elif part.get("type") == "image_url" and role == "user":
                image_url = part.get("image_url")
                url = image_url.get("url") if isinstance(image_url, dict) else image_url
                try:
                    images.append(from_data_url(str(url)))
                except ImageError as error:
                    raise RequestError(str(error)) from None
            else:
                raise RequestError(f"unsupported content part {part.get('type')!r} in a {role} message")
    limit = body.get("max_tokens", body.get("max_completion_tokens", 0))
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 0:
        raise RequestError("'max_tokens' must be a non-negative integer")
    return ChatRequest("\n".join(texts), tuple(images), "\n".join(system), limit)


def request_key(request: ChatRequest) -> str:
    """The replay key of a request: prompt, system text, image pixels and answer length."""
    material = json.dumps(
        [request.system, request.prompt, [pixel_digest(i) for i in request.images], request.max_new_tokens],
        ensure_ascii=False,
    )
    return hashlib.sha256(material.encode("utf-8")).hexdigest()


class OpenAICompatibleServer:
    """See the module docstring; ``start()`` returns the server, ``stop()`` ends it and every stalled request."""

    def __init__(
        self,
        answer: AnswerFunction,
        *,
        model_name: str = "aiv-test-model",
        host: str = "127.0.0.1",
        port: int = 0,
        latency_s: float = 0.0,
        replay: bool = False,
        preload: Mapping[str, str] | None = None,
        api_key: str = "",
    ) -> None:
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise ValueError(f"the test server binds loopback only, not {host!r}")
        if latency_s < 0:
            raise ValueError("latency_s must be >= 0")
        self.answer = answer
        self.model_name = model_name
        self.latency_s = float(latency_s)
        self.replay = replay
        self._api_key = api_key
        self._host, self._requested_port = host, port
        self._faults: deque[Fault] = deque()
        self._death: tuple[int, Fault] | None = None
        self._recorded: dict[str, str] = dict(preload or {})
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.in_flight = 0
        self.peak_in_flight = 0
        self.requests_served = 0
        self.answers_computed = 0

    # -- life cycle ----------------------------------------------------------------------------------------

    def start(self) -> OpenAICompatibleServer:
        if self._httpd is not None:
            raise RuntimeError("server already started")
        handler = type("Handler", (_Handler,), {"server_state": self})
        self._httpd = ThreadingHTTPServer((self._host, self._requested_port), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="openai-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join()
        self._httpd, self._thread = None, None

    def __enter__(self) -> OpenAICompatibleServer:
        return self.start() if self._httpd is None else self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("server not started")
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """The base URL a client takes (``.../v1``)."""
        return f"http://{self._host}:{self.port}/v1"

    # -- faults and replay ---------------------------------------------------------------------------------

    def inject(self, *faults: Fault) -> None:
        """Queue faults; each following chat request takes one (tests of retries, timeouts, bad answers)."""
        with self._lock:
            self._faults.extend(faults)

    def fail_after(self, answered: int, fault: Fault) -> None:
        """Answer the first ``answered`` chat requests (counted from the server's start), then give every later
        one ``fault``: a server that dies mid-run. Faults queued with :meth:`inject` still come first."""
        if answered < 0:
            raise ValueError("answered must be >= 0")
        with self._lock:
            self._death = (int(answered), fault)

    def pending_faults(self) -> int:
        with self._lock:
            return len(self._faults)

    def recorded(self) -> dict[str, str]:
        """The replay answers so far (request key → text)."""
        with self._lock:
            return dict(self._recorded)

    # -- serving -------------------------------------------------------------------------------------------

    def _next_fault(self) -> Fault | None:
        with self._lock:
            if self._faults:
                return self._faults.popleft()
            if self._death is not None and self.requests_served > self._death[0]:
                return self._death[1]
            return None

    def _enter(self) -> None:
        # Counted on arrival, before any answer is written: a client that has its answer sees the count.
        with self._lock:
            self.in_flight += 1
            self.requests_served += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)

    def _leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def authorised(self, header: str | None) -> bool:
        return not self._api_key or header == f"Bearer {self._api_key}"

    def stall(self, seconds: float) -> None:
        self._stopping.wait(seconds)

    def respond(self, request: ChatRequest) -> str:
        """The answer text: replayed, or computed (after the configured latency)."""
        if self.latency_s:
            self._stopping.wait(self.latency_s)  # the simulated model cost; ends early only at stop()
        if not self.replay:
            with self._lock:
                self.answers_computed += 1
            return self.answer(request)
        key = request_key(request)
        with self._lock:
            if key in self._recorded:
                return self._recorded[key]
        text = self.answer(request)
        with self._lock:
            self.answers_computed += 1
            self._recorded.setdefault(key, text)
            return self._recorded[key]


class _Handler(BaseHTTPRequestHandler):
    server_state: OpenAICompatibleServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read their own output
        return

    _counted = False  # this request is in the server's in-flight count

    def _release(self) -> None:
        """Leave the in-flight count, once: before the answer is written, so a client that has its answer and
        sends the next request never sees the previous one still counted (no false overlap)."""
        if self._counted:
            self._counted = False
            self.server_state._leave()

    def _send_json(self, status: int, payload: object) -> None:
        raw = json.dumps(payload).encode("utf-8")
        self._release()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(raw)
        self.close_connection = True

    def _error(self, status: int, message: str) -> None:
        self._send_json(
            status, {"error": {"message": message, "type": "invalid_request_error", "code": status}}
        )

    def do_GET(self) -> None:
        state = self.server_state
        if not state.authorised(self.headers.get("Authorization")):
            self._error(401, "missing or wrong API key")
        elif self.path.rstrip("/") == "/v1/models":
            self._send_json(
                200,
                {"object": "list", "data": [{"id": state.model_name, "object": "model", "owned_by": "aiv"}]},
            )
        else:
            self._error(404, f"no route {self.path}")

    def do_POST(self) -> None:
        state = self.server_state
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._error(404, f"no route {self.path}")
            return
        state._enter()
        self._counted = True
        try:
            self._chat(state)
        finally:
            self._release()

    def _chat(self, state: OpenAICompatibleServer) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length <= 0 or length > _MAX_BODY:
            self._error(400, "missing or oversized body")
            return
        raw = self.rfile.read(length)
        if not state.authorised(self.headers.get("Authorization")):
            self._error(401, "missing or wrong API key")
            return
        fault = state._next_fault()
        if fault is not None and self._fault(state, fault):
            return
        try:
            body = json.loads(raw.decode("utf-8"))
            if not isinstance(body, dict):
                raise RequestError("the body must be a JSON object")
            if body.get("model") != state.model_name:
                self._error(404, f"model {body.get('model')!r} is not served (serving {state.model_name!r})")
                return
            request = parse_chat_request(body)
        except (UnicodeDecodeError, ValueError) as error:
            self._error(400, str(error))
            return
        try:
            text = state.respond(request)
        except Exception as error:  # the answer function failed: the client sees a server error
            self._error(500, f"answer function failed: {type(error).__name__}: {error}")
            return
        self._send_json(
            200,
            {
                "id": f"chatcmpl-{state.requests_served}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": state.model_name,
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
                ],
                "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
            },
        )

    def _fault(self, state: OpenAICompatibleServer, fault: Fault) -> bool:
        """Act out ``fault``; True when the request is finished (every kind but a stall that ended at stop)."""
        if fault.kind == "status":
            self._error(fault.status, f"injected HTTP {fault.status}")
        elif fault.kind == "stall":
            state.stall(fault.seconds)
            self.close_connection = True
        elif fault.kind == "drop":
            self.close_connection = True
        else:
            self._send_json(200, {"choices": "not a list of completions"})
        return True


def transformers_answer(
    model_dir: str,
    *,
    adapter_dir: str = "",
    device: str = "auto",
    dtype: str = "auto",
    default_max_new_tokens: int = 512,
) -> AnswerFunction:
    """An answer function backed by a local transformers checkpoint (the process's shared instance).

    A failed generation raises, so the server answers HTTP 500 and the client's retry logic runs.
    """
    from .chat.local import load_local_chat

    transport = load_local_chat(model_dir, adapter_dir=adapter_dir, device=device, dtype=dtype)

    def answer(request: ChatRequest) -> str:
        result = transport.complete(request, request.max_new_tokens or default_max_new_tokens)
        if result.failed:
            raise RuntimeError(result.error)
        return result.text

    return answer
