"""OpenAI-compatible chat-completions client over plain HTTP (standard library only).

Speaks ``POST {base_url}/chat/completions`` as hosted APIs and local servers do (vLLM
``http://localhost:8000/v1``, llama.cpp ``llama-server`` ``http://localhost:8080/v1``,
Ollama ``http://localhost:11434/v1``). Environment variables, read when the client is
built (arguments win):

    ``SIMJUDGE_LLM_BASE_URL``  server root incl. ``/v1`` (default ``https://api.openai.com/v1``)
    ``SIMJUDGE_LLM_MODEL``     model name when none is given
    ``SIMJUDGE_LLM_API_KEY_ENV`` name of the variable holding the key (default
                               ``OPENAI_API_KEY``); the key itself is read at call time
                               and never logged, hashed or stored. No key = no
                               ``Authorization`` header (fine for local servers).

Retries: HTTP 408/409/429/5xx and connection errors/timeouts are retried with exponential
backoff (``backoff_s * 2**attempt``, capped, honouring ``Retry-After``). A JSON schema is
sent as ``response_format={"type": "json_schema", ...}``; if the server rejects that
(HTTP 400/404/422/501), the request is sent once more without it and the client stops
sending schemas, so servers without structured output still work.

Images (multimodal models): a message's ``content`` may be a list of OpenAI content parts;
:func:`image_part` turns PNG bytes into an ``image_url`` part with a base64 ``data:`` URL
and :func:`image_message` builds a user message of text plus images. The parts are part of
the request, so they are hashed (replay cache) and written to the exchange log.

Example:
    >>> msg = image_message("What is open?", [bytes.fromhex("89504e470d0a1a0a")])
    >>> [p["type"] for p in msg["content"]], msg["content"][1]["image_url"]["url"][:22]
    (['text', 'image_url'], 'data:image/png;base64,')
"""

from __future__ import annotations

import http.client
import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from .base import (
    LLMClient,
    LLMError,
    LLMRequest,
    RawCompletion,
    image_data_url,
    parse_image_data_url,
)
from .log import LLMLog

__all__ = [
    "DEFAULT_BASE_URL",
    "LLMHTTPError",
    "OpenAIClient",
    "image_message",
    "image_part",
    "message_images",
    "text_part",
]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
_RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
_SCHEMA_REJECT_STATUS = frozenset({400, 404, 422, 500, 501})
"""Statuses after which a ``json_schema`` request is tried once more without the schema.

500 is among them because some servers (llama_cpp.server with grammars it cannot build)
crash on the schema rather than reject it: the 500 persists through the retries, the plain
request then goes through, and the client stops sending schemas to that server. A server
that fails the plain request too raises that request's error.
"""


_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def image_part(png: bytes | str | Path, detail: str | None = None) -> dict[str, Any]:
    """An OpenAI ``image_url`` content part carrying a PNG as a base64 ``data:`` URL.

    Args:
        png: The PNG's bytes, or the path of a PNG file.
        detail: Optional OpenAI ``detail`` (``low``, ``high``, ``auto``).

    Raises:
        ValueError: The bytes are not a PNG (the message says what was passed).
    """
    data = Path(png).read_bytes() if isinstance(png, (str, Path)) else bytes(png)
    if not data.startswith(_PNG_MAGIC):
        raise ValueError(f"image_part needs PNG bytes (starting with {_PNG_MAGIC!r}); got "
                         f"{data[:8]!r}; save frames with PIL's Image.save(path, 'PNG')")
    url: dict[str, Any] = {"url": image_data_url(data)}
    if detail:
        url["detail"] = detail
    return {"type": "image_url", "image_url": url}


def text_part(text: str) -> dict[str, Any]:
    """An OpenAI ``text`` content part."""
    return {"type": "text", "text": str(text)}


def image_message(text: str, images: Sequence[bytes | str | Path], role: str = "user",
                  detail: str | None = None) -> dict[str, Any]:
    """A chat message of ``text`` followed by PNG images (bytes or file paths)."""
    return {"role": role, "content": [text_part(text), *(image_part(i, detail) for i in images)]}


def message_images(message: Mapping[str, Any]) -> list[bytes]:
    """The PNG bytes of every base64 ``data:`` image part of a message (for tests, logs)."""
    content = message.get("content")
    if not isinstance(content, (list, tuple)):
        return []
    out = []
    for part in content:
        url = str((part.get("image_url") or {}).get("url", "")) if part.get("type") == "image_url" else ""
        parsed = parse_image_data_url(url)
        if parsed is not None:
            out.append(parsed[1])
    return out


class LLMHTTPError(LLMError):
    """The server answered with an error status (after retries, when retryable).

    Attributes:
        status: HTTP status code, or None for connection errors.
        body: Start of the response body.
        retry_after: The server's ``Retry-After`` in seconds, if it sent one.
    """

    def __init__(self, message: str, status: int | None = None, body: str = "",
                 retry_after: float | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.body = body
        self.retry_after = retry_after


def _retry_after(headers: Any) -> float | None:
    value = headers.get("Retry-After") if headers is not None else None
    try:
        return None if value is None else max(0.0, float(value))
    except ValueError:  # an HTTP date; fall back to our own backoff
        return None


class OpenAIClient(LLMClient):
    """Client for any OpenAI-compatible ``/chat/completions`` endpoint.

    Args:
        model: Model name on the server; default ``$SIMJUDGE_LLM_MODEL``.
        base_url: Server root including ``/v1``; default ``$SIMJUDGE_LLM_BASE_URL`` or
            the OpenAI API.
        api_key_env: Name of the environment variable with the API key.
        timeout_s: Socket timeout of one attempt.
        max_retries: Retries after the first attempt for retryable failures.
        backoff_s: First backoff delay; doubles per retry.
        max_backoff_s: Cap on one delay.
        extra_headers: Added to every request (e.g. ``OpenAI-Organization``).
        extra_body: Merged into every request body (server-specific options).
        log: Optional exchange log.
    """

    backend: ClassVar[str] = "openai"
    supports_json_schema: ClassVar[bool] = True

    def __init__(
        self,
        model: str | None = None,
        *,
        base_url: str | None = None,
        api_key_env: str | None = None,
        timeout_s: float = 120.0,
        max_retries: int = 4,
        backoff_s: float = 1.0,
        max_backoff_s: float = 30.0,
        extra_headers: Mapping[str, str] | None = None,
        extra_body: Mapping[str, Any] | None = None,
        log: LLMLog | None = None,
    ) -> None:
        super().__init__(log=log)
        model = model or os.environ.get("SIMJUDGE_LLM_MODEL")
        if not model:
            raise ValueError("OpenAIClient needs a model: pass model=... or set SIMJUDGE_LLM_MODEL")
        self._model = model
        self.base_url = (base_url or os.environ.get("SIMJUDGE_LLM_BASE_URL")
                         or DEFAULT_BASE_URL).rstrip("/")
        self.api_key_env = (api_key_env or os.environ.get("SIMJUDGE_LLM_API_KEY_ENV")
                            or "OPENAI_API_KEY")
        if max_retries < 0 or timeout_s <= 0:
            raise ValueError("max_retries must be >= 0 and timeout_s > 0")
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self.extra_headers = dict(extra_headers or {})
        self.extra_body = dict(extra_body or {})
        self.schema_supported = True
        """Set False after the server rejected ``response_format``."""

    @property
    def model(self) -> str:
        """The model name sent to the server (used in hashes and provenance)."""
        return self._model

    def _params(self) -> dict[str, Any]:
        return {"base_url": self.base_url, "api_key_env": self.api_key_env,
                "timeout_s": self.timeout_s, "max_retries": self.max_retries}

    @property
    def url(self) -> str:
        """The chat-completions endpoint."""
        return f"{self.base_url}/chat/completions"

    def _body(self, request: LLMRequest, with_schema: bool) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self._model,
            "messages": [dict(m) for m in request.messages],
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
        }
        if request.seed is not None:
            body["seed"] = request.seed
        if request.stop:
            body["stop"] = list(request.stop)
        if with_schema and request.json_schema is not None:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "output", "schema": request.json_schema},
            }
        body.update(self.extra_body)
        return body

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json",
                   **self.extra_headers}
        key = os.environ.get(self.api_key_env)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def _complete(self, request: LLMRequest) -> RawCompletion:
        with_schema = request.json_schema is not None and self.schema_supported
        try:
            data = self._post_with_retries(self._body(request, with_schema))
        except LLMHTTPError as exc:
            if not (with_schema and exc.status in _SCHEMA_REJECT_STATUS):
                raise
            data = self._post_with_retries(self._body(request, False))
            self.schema_supported = False  # only once the plain request went through
            with_schema = False
        return self._parse(data, constrained=with_schema)

    def _parse(self, data: Mapping[str, Any], *, constrained: bool) -> RawCompletion:
        try:
            choice = data["choices"][0]
            text = choice["message"]["content"] or ""
        except (KeyError, IndexError, TypeError):
            raise LLMError(f"{self.url} returned no choices[0].message.content: "
                           f"{json.dumps(data)[:300]}") from None
        usage = data.get("usage") or {}
        return RawCompletion(
            text=text,
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
            finish_reason=str(choice.get("finish_reason") or ""),
            constrained=constrained,
        )

    def _post_with_retries(self, body: Mapping[str, Any]) -> dict[str, Any]:
        payload = json.dumps(body).encode("utf-8")
        attempt = 0
        while True:
            try:
                return self._post(payload)
            except LLMHTTPError as exc:
                retryable = exc.status is None or exc.status in _RETRY_STATUS
                if not retryable or attempt >= self.max_retries:
                    if retryable:
                        raise LLMHTTPError(f"{exc} (gave up after {attempt + 1} attempts)",
                                           exc.status, exc.body, exc.retry_after) from exc
                    raise
                delay = exc.retry_after
                if delay is None:
                    delay = self.backoff_s * 2**attempt
                time.sleep(min(float(delay), self.max_backoff_s))
                attempt += 1

    def _post(self, payload: bytes) -> dict[str, Any]:
        req = urllib.request.Request(self.url, data=payload, headers=self._headers(),
                                     method="POST")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as exc:
            body = exc.read().decode("utf-8", "replace")[:2000]
            raise LLMHTTPError(self._status_message(exc.code, body), exc.code, body,
                               _retry_after(exc.headers)) from None
        except (urllib.error.URLError, ConnectionError, TimeoutError,
                http.client.HTTPException) as exc:
            reason = getattr(exc, "reason", exc)
            raise LLMHTTPError(f"cannot reach {self.url}: {reason}; is the server running "
                               "and SIMJUDGE_LLM_BASE_URL right?") from None
        try:
            return json.loads(raw)
        except json.JSONDecodeError:
            raise LLMError(f"{self.url} returned non-JSON: {raw[:300]!r}") from None

    def _status_message(self, status: int, body: str) -> str:
        hint = ""
        if status in (401, 403):
            have = "is set" if os.environ.get(self.api_key_env) else "is NOT set"
            hint = f"; check the API key in ${self.api_key_env} ({have})"
        elif status == 404:
            hint = f"; check SIMJUDGE_LLM_BASE_URL ({self.base_url}) and the model name"
        return f"{self.url} answered HTTP {status}{hint}: {body[:300]}"
