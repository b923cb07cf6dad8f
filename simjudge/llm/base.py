"""The LLM client contract: one request shape, one response shape, one hash.

Every backend (OpenAI-compatible HTTP, embedded llama.cpp, the replay cache) implements
:class:`LLMClient`. The public :meth:`LLMClient.complete` normalises the request, times
the call and appends it to an optional :class:`~simjudge.llm.log.LLMLog`; backends
override only :meth:`LLMClient._complete`. The request hash (:func:`request_hash`) is the
sha256 of the canonical JSON of the backend, the model and every parameter that can change
the answer, so it addresses the replay cache and ties each logged exchange to its inputs.

Example:
    >>> from simjudge.llm import ScriptedClient
    >>> client = ScriptedClient(["hello"])
    >>> reply = client.complete([{"role": "user", "content": "hi"}], temperature=0.0)
    >>> reply.text, reply.backend, len(reply.request_hash)
    ('hello', 'scripted', 64)
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from simjudge.envs.errors import SimjudgeError

if TYPE_CHECKING:
    from .log import LLMLog

__all__ = [
    "HASH_VERSION",
    "ROLES",
    "LLMClient",
    "LLMError",
    "LLMDependencyError",
    "LLMRequest",
    "LLMResponse",
    "RawCompletion",
    "ScriptedClient",
    "canonical_json",
    "image_data_url",
    "parse_image_data_url",
    "request_hash",
]

HASH_VERSION = 1
"""Bumped when the hashed request layout changes (old cache entries then miss)."""

ROLES: tuple[str, ...] = ("system", "user", "assistant")


def image_data_url(data: bytes, media: str = "png") -> str:
    """The base64 ``data:`` URL of an image's bytes (``media``: ``png``, ``jpeg``, ...).

    The one place image parts, logs and judges build such URLs, so they agree byte for byte.

    Example:
        >>> image_data_url(b"abc")
        'data:image/png;base64,YWJj'
    """
    return f"data:image/{media};base64," + base64.b64encode(data).decode("ascii")


def parse_image_data_url(url: str) -> tuple[str, bytes] | None:
    """``(media, bytes)`` of an image ``data:`` URL (inverse of :func:`image_data_url`).

    Returns None when ``url`` is not a base64 image data URL (a file reference, an https URL).

    Example:
        >>> parse_image_data_url("data:image/png;base64,YWJj"), parse_image_data_url("x.png")
        (('png', b'abc'), None)
    """
    head, sep, data = str(url).partition(",")
    if not (sep and head.startswith("data:image/") and head.endswith(";base64")):
        return None
    return head[len("data:image/") : -len(";base64")], base64.b64decode(data)


class LLMError(SimjudgeError, RuntimeError):
    """An LLM call failed; the message says what was sent where and how to fix it."""


class LLMDependencyError(LLMError, ImportError):
    """An optional dependency (extra) of a backend is not installed.

    The message has the exact install command.
    """


def canonical_json(value: Any) -> str:
    """JSON with sorted keys, no whitespace and UTF-8 kept, so equal data hash equally."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _content(value: Any, index: int) -> Any:
    """A message's content: a string, or OpenAI content parts (text and ``image_url``)."""
    if not isinstance(value, (list, tuple)):
        return str(value)
    parts = []
    for j, part in enumerate(value):
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind == "text" and isinstance(part.get("text"), str):
            parts.append({"type": "text", "text": part["text"]})
        elif kind == "image_url" and isinstance((part.get("image_url") or {}).get("url"), str):
            parts.append({"type": "image_url", "image_url": dict(part["image_url"])})
        else:
            raise ValueError(f"messages[{index}].content[{j}] must be {{'type': 'text', 'text': str}} "
                             "or {'type': 'image_url', 'image_url': {'url': str}} (see "
                             "simjudge.llm.openai_http.image_part)")
    return parts


@dataclass(frozen=True)
class LLMRequest:
    """A normalised chat-completion request.

    Attributes:
        messages: ``({"role": ..., "content": ...}, ...)`` with roles in :data:`ROLES`; a
            content is a string or a list of OpenAI content parts (text, ``image_url``).
        temperature: Sampling temperature; 0 means greedy (deterministic where supported).
        max_tokens: Upper bound on generated tokens.
        seed: Sampling seed; distinct samples of one prompt need distinct seeds, because
            identical requests share one cache entry.
        json_schema: JSON schema the reply must match (constrained decoding where the
            backend supports it), or None for free text.
        stop: Stop strings.
    """

    messages: tuple[Mapping[str, Any], ...]
    temperature: float = 0.0
    max_tokens: int = 512
    seed: int | None = None
    json_schema: Mapping[str, Any] | None = None
    stop: tuple[str, ...] = ()

    @classmethod
    def build(
        cls,
        messages: Iterable[Mapping[str, Any]],
        *,
        temperature: float = 0.0,
        max_tokens: int = 512,
        seed: int | None = None,
        json_schema: Mapping[str, Any] | None = None,
        stop: str | Sequence[str] | None = None,
    ) -> LLMRequest:
        """Validate and normalise arguments; errors name the bad message index or value."""
        norm: list[dict[str, Any]] = []
        for i, msg in enumerate(messages):
            if not isinstance(msg, Mapping) or "role" not in msg or "content" not in msg:
                raise ValueError(f"messages[{i}] must be a dict with 'role' and 'content'")
            if msg["role"] not in ROLES:
                raise ValueError(f"messages[{i}].role must be one of {list(ROLES)}, "
                                 f"got {msg['role']!r}")
            norm.append({"role": str(msg["role"]), "content": _content(msg["content"], i)})
        if not norm:
            raise ValueError("messages is empty; pass at least one user message")
        if not 0.0 <= float(temperature) <= 2.0:
            raise ValueError(f"temperature must be in [0, 2], got {temperature!r}")
        if int(max_tokens) < 1:
            raise ValueError(f"max_tokens must be >= 1, got {max_tokens!r}")
        stops = (stop,) if isinstance(stop, str) else tuple(stop or ())
        return cls(
            messages=tuple(norm),
            temperature=float(temperature),
            max_tokens=int(max_tokens),
            seed=None if seed is None else int(seed),
            json_schema=None if json_schema is None else json.loads(canonical_json(json_schema)),
            stop=stops,
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict (messages as lists of dicts)."""
        return {
            "messages": [dict(m) for m in self.messages],
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            "json_schema": self.json_schema,
            "stop": list(self.stop),
        }


def request_hash(backend: str, model: str, request: LLMRequest) -> str:
    """sha256 hex digest of everything that determines a reply.

    Transport details (URL, API key, timeouts, threads) are deliberately left out: the
    same model asked the same thing on another server hits the same cache entry.
    """
    payload = {"v": HASH_VERSION, "backend": backend, "model": model, **request.to_dict()}
    return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class RawCompletion:
    """What a backend's ``_complete`` returns; :class:`LLMClient` adds the bookkeeping."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str = ""
    constrained: bool = False


@dataclass(frozen=True)
class LLMResponse:
    """One reply with its provenance.

    Attributes:
        text: The generated text.
        backend: Backend name (``openai``, ``llamacpp`` ...).
        model: Model name as the client was configured.
        prompt_tokens: Tokens in the prompt (0 when the backend does not say).
        completion_tokens: Tokens generated.
        latency_s: Wall time of this call (a cache hit is near 0).
        cached: True when served from the replay cache.
        request_hash: :func:`request_hash` of the request.
        finish_reason: ``stop``, ``length`` ... as the backend reported.
        constrained: True when decoding was constrained to the JSON schema.
    """

    text: str
    backend: str
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    cached: bool = False
    request_hash: str = ""
    finish_reason: str = ""
    constrained: bool = False

    @property
    def usage(self) -> dict[str, int]:
        """OpenAI-style token usage."""
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
        }

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LLMResponse:
        """Inverse of :meth:`to_dict`; unknown keys are ignored (forward compatibility)."""
        names = cls.__dataclass_fields__.keys()
        return cls(**{k: v for k, v in data.items() if k in names})


class LLMClient(ABC):
    """A chat-completion backend.

    Subclasses set :attr:`backend`, expose :attr:`model` and implement :meth:`_complete`;
    :meth:`complete` does validation, hashing, timing and logging for all of them.

    Args:
        log: Where every exchange is appended (JSONL); None = not logged here.
    """

    backend: ClassVar[str] = "base"
    supports_json_schema: ClassVar[bool] = False
    """Whether ``json_schema`` constrains decoding (else it is only hashed and logged)."""

    def __init__(self, *, log: LLMLog | None = None) -> None:
        self.log = log

    @property
    @abstractmethod
    def model(self) -> str:
        """Model name used in hashes and provenance."""

    def describe(self) -> dict[str, Any]:
        """Backend, model and parameters, for the provenance of everything generated."""
        return {"backend": self.backend, "model": self.model, "params": self._params()}

    def _params(self) -> dict[str, Any]:
        return {}

    def complete(
        self,
        messages: Iterable[Mapping[str, Any]],
        *,
        temperature: float = 0.0,
        max_tokens: int = 512,
        seed: int | None = None,
        json_schema: Mapping[str, Any] | None = None,
        stop: str | Sequence[str] | None = None,
    ) -> LLMResponse:
        """Generate a reply to ``messages``.

        Args:
            messages: Chat messages ``{"role": "system"|"user"|"assistant", "content": str}``.
            temperature: Sampling temperature; 0 = greedy.
            max_tokens: Upper bound on generated tokens.
            seed: Sampling seed (vary it to draw distinct samples of one prompt).
            json_schema: Constrain the reply to this JSON schema where supported.
            stop: Stop string(s).

        Returns:
            The reply with backend, model, usage, latency, cache flag and request hash.

        Raises:
            LLMError: The backend failed after its retries.
        """
        request = LLMRequest.build(
            messages, temperature=temperature, max_tokens=max_tokens, seed=seed,
            json_schema=json_schema, stop=stop,
        )
        response = self._respond(request)
        if self.log is not None:
            self.log.append(request, response)
        return response

    def _respond(self, request: LLMRequest) -> LLMResponse:
        key = request_hash(self.backend, self.model, request)
        start = time.perf_counter()
        raw = self._complete(request)
        return LLMResponse(
            text=raw.text,
            backend=self.backend,
            model=self.model,
            prompt_tokens=raw.prompt_tokens,
            completion_tokens=raw.completion_tokens,
            latency_s=time.perf_counter() - start,
            cached=False,
            request_hash=key,
            finish_reason=raw.finish_reason,
            constrained=raw.constrained,
        )

    @abstractmethod
    def _complete(self, request: LLMRequest) -> RawCompletion:
        """Backend hook: run one request."""

    def close(self) -> None:  # noqa: B027 - optional hook, nothing to release by default
        """Release resources (a loaded model, sockets)."""


class ScriptedClient(LLMClient):
    """Replies from a script: a list of texts in order, or a function of the request.

    For tests and dry runs of code that needs *some* client; never a stand-in for a model
    in reported results. Running past the end of a list raises :class:`LLMError`.

    Args:
        script: Texts returned in order, or ``f(request) -> text``.
        name: Reported model name.
        log: Optional exchange log.
    """

    backend: ClassVar[str] = "scripted"

    def __init__(
        self,
        script: Sequence[str] | Callable[[LLMRequest], str] = (),
        *,
        name: str = "scripted",
        log: LLMLog | None = None,
    ) -> None:
        super().__init__(log=log)
        self.script = script
        self.name = name
        self.calls: list[LLMRequest] = []

    @property
    def model(self) -> str:
        """The scripted client's ``name``."""
        return self.name

    def _complete(self, request: LLMRequest) -> RawCompletion:
        self.calls.append(request)
        if callable(self.script):
            return RawCompletion(text=self.script(request), finish_reason="stop")
        if len(self.calls) > len(self.script):
            raise LLMError(f"ScriptedClient ran out of replies after {len(self.script)} calls")
        return RawCompletion(text=self.script[len(self.calls) - 1], finish_reason="stop")
