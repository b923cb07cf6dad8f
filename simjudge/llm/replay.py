"""Content-addressed replay cache around any :class:`LLMClient`.

Each reply is stored as ``<cache_dir>/<hash[:2]>/<hash>.json`` where ``hash`` is
:func:`~simjudge.llm.base.request_hash` of the wrapped client's backend and model
and the full request (messages, temperature, max_tokens, seed, json_schema, stop). Files
are plain JSON (request, response, time) so recorded fixtures can be reviewed and
committed; writes are atomic (temporary file + rename), so parallel workers may share one
cache.

Modes:
    ``record``: always call the model and (over)write the entry.
    ``replay``: only serve from the cache; a miss raises :class:`ReplayMissError`.
    ``auto``: serve from the cache when present, otherwise call and store.

Example:
    >>> import tempfile
    >>> from simjudge.llm import ReplayClient, ScriptedClient
    >>> cache = tempfile.mkdtemp()
    >>> msgs = [{"role": "user", "content": "hi"}]
    >>> ReplayClient(ScriptedClient(["hello"]), cache, mode="record").complete(msgs).text
    'hello'
    >>> again = ReplayClient(ScriptedClient([]), cache, mode="replay").complete(msgs)
    >>> again.text, again.cached
    ('hello', True)
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

from simjudge.tasks.spec.io import atomic_write

from .base import LLMClient, LLMError, LLMRequest, LLMResponse, RawCompletion, request_hash
from .log import LLMLog

__all__ = ["REPLAY_MODES", "ReplayClient", "ReplayMissError", "ReplayCache"]

REPLAY_MODES: tuple[str, ...] = ("record", "replay", "auto")


class ReplayMissError(LLMError, KeyError):
    """``replay`` mode found no cache entry for a request."""

    def __init__(self, key: str, cache_dir: Path, backend: str, model: str) -> None:
        self.key = key
        super().__init__(
            f"no cached reply for request {key} ({backend}:{model}) in {cache_dir}. "
            "Record it by running once with mode='record' or 'auto' "
            "(SIMJUDGE_LLM_REPLAY=auto) and a reachable model; any change to messages, "
            "temperature, max_tokens, seed, json_schema, stop or the model gives a new hash."
        )

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0])


class ReplayCache:
    """The on-disk store: one JSON file per request hash.

    Args:
        cache_dir: Root folder (created on first write).
    """

    def __init__(self, cache_dir: str | Path) -> None:
        self.root = Path(cache_dir)

    def path(self, key: str) -> Path:
        """File of one entry."""
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored entry, or None."""
        try:
            return json.loads(self.path(key).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None

    def put(self, key: str, request: LLMRequest, response: LLMResponse) -> Path:
        """Store atomically; returns the entry's path."""
        path = self.path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        entry = {
            "request_hash": key,
            "time": datetime.now(UTC).isoformat(timespec="seconds"),
            "request": {"backend": response.backend, "model": response.model,
                        **request.to_dict()},
            "response": response.to_dict(),
        }
        atomic_write(path, json.dumps(entry, ensure_ascii=False, indent=1))
        return path

    def __len__(self) -> int:
        return sum(1 for _ in self.root.glob("??/*.json")) if self.root.exists() else 0


class ReplayClient(LLMClient):
    """Wrap ``inner`` with the replay cache; hashes use the inner backend and model.

    The wrapped client is only called on a miss (``auto``) or always (``record``), so in
    ``replay`` mode it is never loaded: a :class:`~simjudge.llm.LlamaCppClient`
    loads its model lazily, and an HTTP client needs no server.

    Args:
        inner: The client that answers misses.
        cache_dir: Cache root folder.
        mode: ``record``, ``replay`` or ``auto``.
        log: Optional exchange log (cache hits are logged with ``cached: true``).
    """

    backend: ClassVar[str] = "replay"

    def __init__(
        self,
        inner: LLMClient,
        cache_dir: str | Path,
        *,
        mode: str = "auto",
        log: LLMLog | None = None,
    ) -> None:
        if mode not in REPLAY_MODES:
            raise ValueError(f"mode must be one of {list(REPLAY_MODES)}, got {mode!r}")
        super().__init__(log=log)
        self.inner = inner
        self.cache = ReplayCache(cache_dir)
        self.mode = mode

    @property
    def model(self) -> str:
        """The wrapped client's model."""
        return self.inner.model

    @property
    def supports_json_schema(self) -> bool:  # type: ignore[override]
        """Whether the wrapped client constrains decoding by ``json_schema``."""
        return self.inner.supports_json_schema

    def describe(self) -> dict[str, Any]:
        """The inner client's description plus the cache settings."""
        info = self.inner.describe()
        info["replay"] = {"mode": self.mode, "cache_dir": str(self.cache.root)}
        return info

    def key(self, request: LLMRequest) -> str:
        """Cache key of a request for the wrapped backend and model."""
        return request_hash(self.inner.backend, self.inner.model, request)

    def _respond(self, request: LLMRequest) -> LLMResponse:
        key = self.key(request)
        if self.mode != "record":
            start = time.perf_counter()
            entry = self.cache.get(key)
            if entry is not None:
                stored = LLMResponse.from_dict(entry["response"])
                return LLMResponse.from_dict({
                    **stored.to_dict(), "cached": True, "request_hash": key,
                    "latency_s": time.perf_counter() - start,
                })
            if self.mode == "replay":
                raise ReplayMissError(key, self.cache.root, self.inner.backend, self.inner.model)
        response = self.inner._respond(request)
        self.cache.put(key, request, response)
        return response

    def _complete(self, request: LLMRequest) -> RawCompletion:  # pragma: no cover
        raise NotImplementedError("ReplayClient answers through _respond")

    def close(self) -> None:
        """Close the wrapped client."""
        self.inner.close()
