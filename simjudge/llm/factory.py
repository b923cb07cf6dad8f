"""Build a client from a short spec string and environment variables.

Spec strings (``SIMJUDGE_LLM`` when none is given; default ``llamacpp:qwen2.5-coder-1.5b``):

    ``llamacpp[:<registry name or .gguf path>]``  embedded llama.cpp (offline default)
    ``openai[:<model>]``                         OpenAI-compatible HTTP server

With a cache folder (argument or ``SIMJUDGE_LLM_CACHE``) the client is wrapped in a
:class:`~simjudge.llm.replay.ReplayClient` whose mode comes from the argument or
``SIMJUDGE_LLM_REPLAY`` (``record``/``replay``/``auto``, default ``auto``). Exchanges are
appended to the JSONL log given as argument or in ``SIMJUDGE_LLM_LOG``.

Example:
    >>> client = make_client("openai:my-model", base_url="http://127.0.0.1:9/v1")
    >>> client.describe()["backend"], client.model
    ('openai', 'my-model')
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .base import LLMClient
from .llamacpp import DEFAULT_LOCAL_MODEL, LlamaCppClient
from .log import LLMLog
from .openai_http import OpenAIClient
from .replay import ReplayClient

__all__ = ["BACKENDS", "DEFAULT_SPEC", "make_client"]

BACKENDS: tuple[str, ...] = ("llamacpp", "openai")
DEFAULT_SPEC = f"llamacpp:{DEFAULT_LOCAL_MODEL}"


def make_client(
    spec: str | None = None,
    *,
    cache_dir: str | Path | None = None,
    mode: str | None = None,
    log: LLMLog | str | Path | None = None,
    **kwargs: Any,
) -> LLMClient:
    """A client for ``spec``, optionally behind the replay cache and logging.

    Args:
        spec: ``backend[:model]``; see the module docstring.
        cache_dir: Replay cache folder; None = ``$SIMJUDGE_LLM_CACHE`` or no cache.
        mode: Replay mode; None = ``$SIMJUDGE_LLM_REPLAY`` or ``auto``.
        log: An :class:`LLMLog` or a ``.jsonl`` path; None = ``$SIMJUDGE_LLM_LOG`` or no log.
        **kwargs: Backend arguments (``base_url``, ``n_ctx`` ...).

    Raises:
        ValueError: Unknown backend (the message lists the valid ones).
    """
    spec = spec or os.environ.get("SIMJUDGE_LLM") or DEFAULT_SPEC
    backend, _, model = spec.partition(":")
    log = log or os.environ.get("SIMJUDGE_LLM_LOG") or None
    if isinstance(log, str | Path):
        log = LLMLog(log)
    cache_dir = cache_dir or os.environ.get("SIMJUDGE_LLM_CACHE") or None
    inner_log = None if cache_dir else log
    client: LLMClient
    if backend == "llamacpp":
        client = LlamaCppClient(model or None, log=inner_log, **kwargs)
    elif backend == "openai":
        client = OpenAIClient(model or None, log=inner_log, **kwargs)
    else:
        raise ValueError(f"unknown LLM backend {backend!r} in {spec!r}; use one of "
                         f"{list(BACKENDS)} as 'backend:model'")
    if cache_dir:
        mode = mode or os.environ.get("SIMJUDGE_LLM_REPLAY") or "auto"
        client = ReplayClient(client, cache_dir, mode=mode, log=log)
    return client
