"""What the server-VLM judges share: building the client, K-sample test-time scaling, errors.

A VLM judge takes a client object (``client=``, as the LLM judges do) or builds one from
plain parameters, so a spec string alone can name a server::

    make_judge("vlm-step:server='openai:Qwen2-VL-2B-Instruct',"
               "base_url='http://127.0.0.1:8000/v1',cache='runs/vlm_cache'")

``server`` is a :func:`simjudge.llm.make_client` spec (``openai:<model>``; the
model may also come from ``$SIMJUDGE_LLM_MODEL``), ``cache`` a replay-cache folder
(record/replay/auto via ``replay``, default ``auto``), ``log`` a JSONL exchange log. A judge
built that way rebuilds its client after pickling (worker processes); an injected client
is not pickled (set ``judge.client`` again).

Test-time scaling (EQA-RM): ``k`` samples with seeds ``seed … seed + k − 1`` at
``temperature`` (default 0 for k = 1, 0.8 otherwise); unparseable replies are dropped and
the rest aggregated by ``mean`` or ``vote``; the per-sample values and their spread are in
the details of every signal.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from simjudge.envs.errors import SimjudgeError
from simjudge.llm.openai_http import LLMHTTPError

from ..base import Judge
from ..llm.parse import SUPPORTED_AGGREGATES
from .prompts import PROMPT_VERSION

__all__ = ["VLMServerError", "build_client"]

_P = TypeVar("_P")
_REPLY_CHARS = 600
_TEXT_ONLY_HINT = (
    "; if the server is text-only it cannot take image parts: serve a vision-language model "
    "(vLLM with e.g. Qwen2-VL; llama.cpp's server with --clip_model_path / --mmproj and a "
    "multimodal chat format) — see the README's 'Server VLM judges' section"
)


class VLMServerError(SimjudgeError, RuntimeError):
    """The VLM server failed on a judge's request; the message says what to check."""


def build_client(
    server: str | None = None,
    base_url: str | None = None,
    cache: str | None = None,
    replay: str | None = None,
    log: str | None = None,
) -> Any:
    """A client from plain parameters (see the module docstring), or None if none is named."""
    if not (server or base_url or cache):
        return None
    from simjudge.llm import make_client

    spec = server or "openai"
    kwargs: dict[str, Any] = {}
    if base_url and spec.partition(":")[0] == "openai":
        kwargs["base_url"] = base_url
    return make_client(spec, cache_dir=cache, mode=replay, log=log, **kwargs)


class VLMJudgeBase(Judge):
    """The shared machinery of ``vlm-step``, ``image-episode`` and ``preference`` (VLM).

    The client may be missing when the judge is built (registry listings, pickled copies);
    the first request then builds it from ``server``/``base_url``/``cache`` or says how to
    give one.
    """

    max_reward = 1.0
    _transient = ("client",)

    def __init__(
        self,
        client: Any = None,
        *,
        server: str | None = None,
        base_url: str | None = None,
        cache: str | None = None,
        replay: str | None = None,
        log: str | None = None,
        k: int = 1,
        temperature: float | None = None,
        aggregate: str = "mean",
        max_tokens: int = 256,
        seed: int = 0,
        json_mode: bool = False,
        size: int | None = 224,
    ) -> None:
        super().__init__()
        self._client_spec = {"server": server, "base_url": base_url, "cache": cache,
                             "replay": replay, "log": log}
        if client is not None and not callable(getattr(client, "complete", None)):
            raise TypeError(f"{type(self).__name__}: client must have a .complete(messages, "
                            f"...) method, got {type(client).__name__}")
        if int(k) < 1:
            raise ValueError(f"k (samples per judgement) must be >= 1, got {k}")
        if aggregate not in SUPPORTED_AGGREGATES:
            raise ValueError(f"aggregate={aggregate!r} is not supported; use one of "
                             f"{list(SUPPORTED_AGGREGATES)}")
        temperature = (0.0 if int(k) == 1 else 0.8) if temperature is None else float(temperature)
        if not 0.0 <= temperature <= 2.0:
            raise ValueError(f"temperature must be in [0, 2], got {temperature}")
        if size is not None and int(size) < 8:
            raise ValueError(f"size (long side of the images sent, px) must be >= 8, got {size}")
        self.client = client if client is not None else build_client(**self._client_spec)
        self.k = int(k)
        self.temperature = temperature
        self.aggregate = aggregate
        self.max_tokens = int(max_tokens)
        self.seed = int(seed)
        self.json_mode = bool(json_mode)
        self.size = None if size is None else int(size)

    def __deepcopy__(self, memo: dict[int, Any]) -> VLMJudgeBase:
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        for key, value in self.__dict__.items():
            new.__dict__[key] = value if key == "client" else copy.deepcopy(value, memo)
        return new

    @property
    def model(self) -> str:
        """The client's model name ("" without a client)."""
        if self.client is None:
            return ""
        return str(getattr(self.client, "model", type(self.client).__name__))

    def _client(self) -> Any:
        if self.client is None:
            self.client = build_client(**self._client_spec)
            if self.client is None:
                raise VLMServerError(
                    f"{self.label} has no VLM client: pass client=make_client('openai:<model>',"
                    " base_url='http://127.0.0.1:8000/v1') (simjudge.llm), or build the "
                    "judge with server='openai:<model>', base_url=..., cache=... (injected "
                    "clients are not pickled: set judge.client again in worker processes)"
                )
        return self.client

    def ask(
        self,
        messages: Sequence[Mapping[str, Any]],
        parse: Callable[[str], _P],
        schema: Mapping[str, Any] | None = None,
    ) -> tuple[list[_P], list[str]]:
        """Ask ``k`` times (seeds ``seed`` … ``seed + k − 1``); parse every reply.

        Raises:
            VLMServerError: The client failed (the message adds what to check).
        """
        client = self._client()
        parsed, replies = [], []
        for i in range(self.k):
            try:
                reply = client.complete(
                    list(messages), temperature=self.temperature, max_tokens=self.max_tokens,
                    seed=self.seed + i, json_schema=schema if self.json_mode else None,
                )
            except SimjudgeError as exc:
                hint = _TEXT_ONLY_HINT if isinstance(exc, LLMHTTPError) else ""
                raise VLMServerError(f"{self.label}: the VLM request failed: {exc}{hint}") from exc
            text = reply if isinstance(reply, str) else str(getattr(reply, "text", reply))
            replies.append(text)
            parsed.append(parse(text))
        return parsed, replies

    def common_details(self, replies: Sequence[str]) -> dict[str, Any]:
        """Details every VLM signal carries (sampling settings and the raw replies)."""
        return {
            "replies": [r[:_REPLY_CHARS] for r in replies],
            "k": self.k,
            "aggregate": self.aggregate,
            "temperature": self.temperature,
            "model": self.model,
            "json_mode": self.json_mode,
            "image_size": self.size,
            "prompt_version": PROMPT_VERSION,
        }
