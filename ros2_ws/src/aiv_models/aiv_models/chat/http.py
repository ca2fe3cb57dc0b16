"""OpenAI-compatible HTTP transport (vLLM, SGLang, llama.cpp ``llama-server``, Ollama, ``transformers serve``).

One ``POST {base_url}/chat/completions`` per request, with the reference's client behaviour (spec §5.1): a connect
timeout (5 s) and a read timeout (60 s), 2 retries, and after the last failure an empty answer (which the verifier
turns into "Missing"), reported in the result's ``error``. Images travel as PNG ``data:`` URLs in ``image_url``
parts placed before the text, as the reference put images first in its single user message; decoding is greedy
(``temperature`` 0).

Written on the standard library (``http.client``) because it gives exact connect and read timeouts without a new
dependency, and a fresh connection per call is thread-safe without a pool. Retried: connection failures, timeouts,
HTTP 408 / 409 / 429 / 5xx and unreadable 200 bodies; not retried: other 4xx (a wrong model name or key does not
heal). The API key is read once from the environment variable the caller names and sent only in the
``Authorization`` header; it is never part of the identity, an error message or ``repr``.
"""

from __future__ import annotations

import http.client
import json
import os
import ssl
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from .images import to_data_url
from .types import ChatRequest, ChatResult

RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})
_ERROR_BODY_CHARS = 200


class TransportConfigError(ValueError):
    """The HTTP transport's settings are unusable (bad URL, missing model name, negative timeout)."""


class _Failure(Exception):
    """One failed attempt; ``retry`` says whether another attempt may succeed."""

    def __init__(self, message: str, retry: bool) -> None:
        super().__init__(message)
        self.retry = retry


class OpenAIChatTransport:
    """Chat completions against an OpenAI-compatible server; every call is independent (thread-safe)."""

    parallel = True

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key_env: str = "OPENAI_API_KEY",
        connect_timeout_s: float = 5.0,
        read_timeout_s: float = 60.0,
        retries: int = 2,
        retry_backoff_s: float = 0.0,
    ) -> None:
        parts = urlsplit(base_url.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise TransportConfigError(
                f"language_model.base_url {base_url!r} must be an http(s) URL such as http://127.0.0.1:8000/v1"
            )
        if not model.strip():
            raise TransportConfigError(
                "language_model.model must name the served model (see the server's /v1/models)"
            )
        if connect_timeout_s <= 0 or read_timeout_s <= 0:
            raise TransportConfigError("language_model connect/read timeouts must be positive")
        if retries < 0 or retry_backoff_s < 0:
            raise TransportConfigError("language_model.retries and retry back-off must be >= 0")
        self.base_url = base_url.strip().rstrip("/")
        self.model = model.strip()
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port or (443 if self._https else 80)
        self._path = (parts.path.rstrip("/") or "") + "/chat/completions"
        self.connect_timeout_s = float(connect_timeout_s)
        self.read_timeout_s = float(read_timeout_s)
        self.retries = int(retries)
        self.retry_backoff_s = float(retry_backoff_s)
        self.api_key_env = api_key_env
        self.__api_key = os.environ.get(api_key_env, "") if api_key_env else ""

    def __repr__(self) -> str:
        key = f"${self.api_key_env} set" if self.__api_key else "no key"
        return f"OpenAIChatTransport({self.base_url!r}, model={self.model!r}, {key})"

    @property
    def identity(self) -> Mapping[str, str]:
        return {"transport": "openai", "base_url": self.base_url, "model": self.model}

    def payload(self, request: ChatRequest, max_new_tokens: int) -> dict[str, Any]:
        """The chat/completions body: optional system message, then one user message (images, then text)."""
        messages: list[dict[str, Any]] = []
        if request.system:
            messages.append({"role": "system", "content": request.system})
        if request.images:
            content: list[dict[str, Any]] = [
                {"type": "image_url", "image_url": {"url": to_data_url(image)}} for image in request.images
            ]
            content.append({"type": "text", "text": request.prompt})
            messages.append({"role": "user", "content": content})
        else:
            messages.append({"role": "user", "content": request.prompt})
        return {
            "model": self.model,
            "messages": messages,
            "max_tokens": int(max_new_tokens),
            "temperature": 0.0,
            "top_p": 1.0,
            "stream": False,
        }

    def complete(self, request: ChatRequest, max_new_tokens: int) -> ChatResult:
        started = time.perf_counter()
        try:
            body = json.dumps(self.payload(request, max_new_tokens)).encode("utf-8")
        except Exception as error:  # an image that cannot be encoded: no attempt can succeed
            return ChatResult("", f"request not encodable: {type(error).__name__}: {error}", 0, 0.0)
        attempts = 0
        last_error = ""
        for attempt in range(self.retries + 1):
            attempts += 1
            try:
                text = self._attempt(body)
                return ChatResult(text, "", attempts, time.perf_counter() - started)
            except _Failure as failure:
                last_error = self._redact(str(failure))
                if not failure.retry or attempt == self.retries:
                    break
            if self.retry_backoff_s:
                time.sleep(
                    self.retry_backoff_s * (2**attempt)
                )  # back-off between retries, not synchronisation
        return ChatResult("", last_error, attempts, time.perf_counter() - started)

    def _attempt(self, body: bytes) -> str:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.__api_key:
            headers["Authorization"] = f"Bearer {self.__api_key}"
        connection = self._connection()
        try:
            try:
                connection.connect()
            except TimeoutError as error:
                raise _Failure(f"connect timed out after {self.connect_timeout_s:g} s", True) from error
            except OSError as error:
                raise _Failure(
                    f"cannot connect to {self.base_url}: {error.strerror or error}", True
                ) from error
            if connection.sock is not None:
                connection.sock.settimeout(self.read_timeout_s)
            try:
                connection.request("POST", self._path, body=body, headers=headers)
                response = connection.getresponse()
                raw = response.read()
            except TimeoutError as error:
                raise _Failure(
                    f"no answer within the read timeout of {self.read_timeout_s:g} s", True
                ) from error
            except (OSError, http.client.HTTPException) as error:
                raise _Failure(f"connection failed: {type(error).__name__}: {error}", True) from error
        finally:
            connection.close()
        if response.status != 200:
            excerpt = raw[:_ERROR_BODY_CHARS].decode("utf-8", "replace")
            raise _Failure(f"HTTP {response.status}: {excerpt}", response.status in RETRY_STATUSES)
        return _answer_text(raw)

    def check_server(self) -> str:
        """ "" when the server answers for ``model``, else why not (one line).

        Run once at start-up: a mistyped URL or model name would otherwise turn every call of a whole
        evaluation into an empty answer ("Missing"). First ``GET {base_url}/models`` (one attempt, the connect
        timeout for both phases): a server that lists ``model`` is accepted, one that cannot be reached is
        refused. Not every server lists what it serves (``transformers serve`` lists its hub cache only: HTTP
        500 without one, ``[]`` with an empty one, never a model loaded from a local directory), so any other
        answer gets a probe: one chat completion for ``model`` with ``max_tokens`` 1. A well-formed completion
        accepts the server; otherwise the refusal names what ``/models`` said and what the probe got.
        """
        headers = {"Accept": "application/json"}
        if self.__api_key:
            headers["Authorization"] = f"Bearer {self.__api_key}"
        connection = self._connection()
        path = self._path.rsplit("/chat/completions", 1)[0] + "/models"
        try:
            connection.request("GET", path, headers=headers)
            response = connection.getresponse()
            raw = response.read()
        except (OSError, http.client.HTTPException) as error:
            reason = (
                "timed out"
                if isinstance(error, TimeoutError)
                else (getattr(error, "strerror", None) or error)
            )
            return _one_line(self._redact(f"cannot reach {self.base_url}/models: {reason}"))
        finally:
            connection.close()
        if response.status != 200:
            said = f"{self.base_url}/models answered HTTP {response.status}"
        else:
            try:
                data = json.loads(raw.decode("utf-8"))
                served = [str(item["id"]) for item in data["data"]]
            except (UnicodeDecodeError, ValueError, KeyError, TypeError):
                said = f"{self.base_url}/models answered no OpenAI model list"
            else:
                if self.model in served:
                    return ""
                said = (
                    f"{self.base_url} does not serve model {self.model!r}; it serves {served}"
                    if served
                    else f"{self.base_url}/models lists no models"
                )
        failure = self._probe()
        if not failure:
            return ""
        return _one_line(
            self._redact(
                f"{said}, and a one-token chat completion for model {self.model!r} failed: {failure}"
            )
        )

    def _probe(self) -> str:
        """ "" when a chat completion for ``model`` with ``max_tokens`` 1 comes back well-formed, else what it got.

        The body is a real call's (same fields), so a server that rejects one of them is found here too.
        """
        body = json.dumps(self.payload(ChatRequest("Reply with one word."), 1)).encode("utf-8")
        try:
            self._attempt(body)
        except _Failure as failure:
            return str(failure)
        return ""

    def _connection(self) -> http.client.HTTPConnection:
        if self._https:
            return http.client.HTTPSConnection(
                self._host, self._port, timeout=self.connect_timeout_s, context=ssl.create_default_context()
            )
        return http.client.HTTPConnection(self._host, self._port, timeout=self.connect_timeout_s)

    def _redact(self, text: str) -> str:
        return text.replace(self.__api_key, "***") if self.__api_key else text

    def close(self) -> None:
        """No pooled connections to close: each call opens and closes its own."""


def _one_line(text: str) -> str:
    """``text`` with every run of whitespace (newlines of a quoted error body included) as one space."""
    return " ".join(text.split())


def _answer_text(raw: bytes) -> str:
    """``choices[0].message.content`` of a chat/completions body (a list of text parts is joined)."""
    try:
        data = json.loads(raw.decode("utf-8"))
        message = data["choices"][0]["message"]
    except (UnicodeDecodeError, ValueError, KeyError, IndexError, TypeError) as error:
        raise _Failure(f"malformed chat/completions answer ({type(error).__name__})", True) from None
    content = message.get("content") if isinstance(message, dict) else None
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(part.get("text", ""))
            for part in content
            if isinstance(part, dict) and part.get("type") == "text"
        )
    raise _Failure("malformed chat/completions answer (content is not text)", True)
