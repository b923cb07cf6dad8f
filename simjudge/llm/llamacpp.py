"""Embedded local model: llama.cpp through ``llama-cpp-python`` running a GGUF on CPU.

The offline default backend. The model is loaded at the first call (not at construction),
so building a client, hashing requests and replaying from the cache work without the
extra installed. A JSON schema is enforced by grammar-constrained decoding
(a GBNF grammar built from the schema), so even a small model
returns parseable JSON of the right shape. At temperature 0 decoding is greedy and
repeatable; at higher temperatures the per-call ``seed`` (else the client's) fixes the
sample.

Install (a source build, ~4 min on 2 cores; ``GGML_NATIVE=OFF`` avoids a CPU-specific
build that crashes on some machines)::

    CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install --no-cache-dir llama-cpp-python==0.3.36

plus the weights of a registered model (:mod:`simjudge.llm.models`).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import threading
from pathlib import Path
from typing import Any, ClassVar

from .base import LLMClient, LLMDependencyError, LLMError, LLMRequest, RawCompletion
from .heartbeat import Heartbeat, free_cores
from .log import LLMLog
from .models import LLM_INSTALL_HINT, MODELS, ensure_model

__all__ = ["DEFAULT_LOCAL_MODEL", "LlamaCppClient", "default_threads", "llama_cpp_available"]

DEFAULT_LOCAL_MODEL = "qwen2.5-coder-1.5b"


def llama_cpp_available() -> bool:
    """True when ``llama_cpp`` can be imported (checked without importing it)."""
    import importlib.util

    return importlib.util.find_spec("llama_cpp") is not None


def _grammar(schema: Any) -> tuple[Any, bool]:
    """A GBNF grammar for ``schema``.

    Falls back to generic JSON (not schema-constrained) for schemas llama.cpp's converter
    does not handle.
    """
    from llama_cpp.llama_grammar import JSON_GBNF, LlamaGrammar

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            return LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False), True
        except Exception:  # noqa: BLE001 - any converter failure means "unsupported schema"
            return LlamaGrammar.from_string(JSON_GBNF, verbose=False), False


def default_threads() -> int:
    """``$SIMJUDGE_LLM_THREADS``, else the cores that are free now (at least 1).

    llama.cpp's threads busy-wait at every layer; when they outnumber the free cores
    (simulation workers, other jobs) throughput collapses. Measured on 2 shared vCPUs with
    Qwen2.5-Coder-1.5B: 1 thread 5.5-6 tokens/s, 2 threads 0.5-1 tokens/s when the other core
    was busy. So the count is the usable CPUs less the 1-minute load average
    (:func:`~simjudge.llm.heartbeat.free_cores`), read when the model loads.
    """
    env = os.environ.get("SIMJUDGE_LLM_THREADS")
    if env:
        return max(1, int(env))
    return free_cores()


class LlamaCppClient(LLMClient):
    """llama.cpp chat completions on CPU.

    Args:
        model: A registry name (``qwen2.5-coder-1.5b``, ``smollm2-135m``) or a ``.gguf``
            path; default ``$SIMJUDGE_LLM_LOCAL_MODEL`` or ``qwen2.5-coder-1.5b``.
        n_ctx: Context window in tokens (prompt + reply).
        n_threads: CPU threads; default :func:`default_threads`.
        seed: Default sampling seed when a call passes none.
        top_p: Nucleus sampling mass (ignored at temperature 0).
        repeat_penalty: llama.cpp repetition penalty (1.0 = off).
        chat_format: Force a llama-cpp-python chat format; None = the template stored
            in the GGUF.
        log: Optional exchange log.
        progress: Print status lines while generating (prompt size, tokens so far, tokens/s;
            :class:`~simjudge.llm.heartbeat.Heartbeat`), on a terminal or not.
    """

    backend: ClassVar[str] = "llamacpp"
    supports_json_schema: ClassVar[bool] = True

    def __init__(
        self,
        model: str | os.PathLike[str] | None = None,
        *,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        seed: int = 0,
        top_p: float = 0.95,
        repeat_penalty: float = 1.0,
        chat_format: str | None = None,
        log: LLMLog | None = None,
        progress: bool = True,
    ) -> None:
        super().__init__(log=log)
        self.progress = progress
        self.progress_label = ""
        """What the next generation is for, shown in its status lines (set by callers)."""
        model = model or os.environ.get("SIMJUDGE_LLM_LOCAL_MODEL") or DEFAULT_LOCAL_MODEL
        self._source = model
        self._model = model if isinstance(model, str) and model in MODELS else Path(model).name
        self.n_ctx = n_ctx
        self.n_threads = n_threads or default_threads()
        self.seed = seed
        self.top_p = top_p
        self.repeat_penalty = repeat_penalty
        self.chat_format = chat_format
        self._llama: Any = None
        self._lock = threading.Lock()

    @property
    def model(self) -> str:
        """The embedded model's name, or the file name of a model path (hashes, provenance)."""
        return self._model

    def _params(self) -> dict[str, Any]:
        return {"n_ctx": self.n_ctx, "n_threads": self.n_threads, "seed": self.seed,
                "top_p": self.top_p, "repeat_penalty": self.repeat_penalty,
                "chat_format": self.chat_format}

    @property
    def loaded(self) -> bool:
        """True once the GGUF is in memory."""
        return self._llama is not None

    def load(self) -> Any:
        """Load the model now (otherwise on the first call); returns the ``Llama``."""
        if self._llama is not None:
            return self._llama
        try:
            import llama_cpp
        except ImportError:
            raise LLMDependencyError(
                f"the llama.cpp backend needs llama-cpp-python; run `make llm` or: "
                f"{LLM_INSTALL_HINT}") from None
        path = ensure_model(self._source)
        kwargs: dict[str, Any] = {
            "model_path": str(path), "n_ctx": self.n_ctx, "n_threads": self.n_threads,
            "n_threads_batch": self.n_threads, "seed": self.seed, "n_gpu_layers": 0,
            "verbose": False,
        }
        if self.chat_format:
            kwargs["chat_format"] = self.chat_format
        # llama.cpp prints model metadata on stderr from C; keep Python-side noise down
        with contextlib.redirect_stderr(io.StringIO()):
            try:
                self._llama = llama_cpp.Llama(**kwargs)
            except (ValueError, RuntimeError) as exc:
                raise LLMError(f"llama.cpp could not load {path}: {exc}") from None
        return self._llama

    def _complete(self, request: LLMRequest) -> RawCompletion:
        with self._lock:
            llama = self.load()
            kwargs: dict[str, Any] = {
                "messages": [dict(m) for m in request.messages],
                "temperature": request.temperature,
                "top_p": self.top_p,
                "repeat_penalty": self.repeat_penalty,
                "max_tokens": request.max_tokens,
                "seed": self.seed if request.seed is None else request.seed,
                "stop": list(request.stop) or None,
            }
            constrained = False
            if request.json_schema is not None:
                kwargs["grammar"], constrained = _grammar(request.json_schema)
            try:
                text, tokens, finish = self._stream(llama, kwargs, request.max_tokens)
            except ValueError as exc:  # e.g. prompt longer than n_ctx
                raise LLMError(f"llama.cpp ({self._model}) rejected the request: {exc}; "
                               f"raise n_ctx (now {self.n_ctx}) or shorten the prompt") from None
        prompt = "".join(str(m.get("content", "")) for m in request.messages)
        return RawCompletion(
            text=text,
            prompt_tokens=len(llama.tokenize(prompt.encode("utf-8"), add_bos=False)),
            completion_tokens=tokens,
            finish_reason=finish,
            constrained=constrained,
        )

    def _stream(self, llama: Any, kwargs: dict[str, Any], max_tokens: int) -> tuple[str, int, str]:
        """Generate token by token, with status lines (:class:`Heartbeat`) when ``progress``.

        The lines go to standard error whether or not it is a terminal: what is generated
        (:attr:`progress_label`, e.g. ``candidate 2/3``), the prompt's size and the threads,
        then tokens so far and tokens/s every 15 s, and the total at the end.
        """
        parts: list[str] = []
        finish = ""
        beat = None
        if self.progress:
            prompt = "".join(str(m.get("content", "")) for m in kwargs["messages"])
            beat = Heartbeat(self._model, self.progress_label,
                             prompt_tokens=len(llama.tokenize(prompt.encode("utf-8"),
                                                              add_bos=False)),
                             threads=self.n_threads)
            beat.start(background=True)
        try:
            for chunk in llama.create_chat_completion(**kwargs, stream=True):
                choice = chunk["choices"][0]
                piece = (choice.get("delta") or {}).get("content")
                if piece:
                    parts.append(piece)
                    if beat is not None:
                        beat.token()
                finish = str(choice.get("finish_reason") or finish)
        finally:
            if beat is not None:
                beat.finish()
        return "".join(parts), len(parts), finish

    def close(self) -> None:
        """Free the model's memory."""
        with self._lock:
            if self._llama is not None:
                with contextlib.suppress(Exception):
                    self._llama.close()
                self._llama = None
