"""simjudge.tasks.llm: one LLM client interface, several backends, every exchange logged.

Backends: :class:`OpenAIClient` (any OpenAI-compatible HTTP server), :class:`LlamaCppClient`
(embedded GGUF, offline default) and :class:`ScriptedClient` (tests). :class:`ReplayClient`
wraps any of them with a content-addressed cache (record / replay / auto) so tests and
demos are deterministic; :class:`LLMLog` appends every exchange to JSONL;
:func:`complete_structured` gets validated JSON out of weak models. Sentence embedders for
the exemplar pool live here too.
"""

from __future__ import annotations

# contract
from .base import (
    LLMClient,
    LLMDependencyError,
    LLMError,
    LLMRequest,
    LLMResponse,
    RawCompletion,
    ScriptedClient,
    canonical_json,
    request_hash,
)

# embedders
from .embeddings import Embedder, HashingEmbedder, MiniLMEmbedder

# construction from a spec string
from .factory import make_client

# backends
from .llamacpp import LlamaCppClient, llama_cpp_available

# logging and replay
from .log import LLMLog

# model registry
from .models import MODELS, ModelIntegrityError, ModelNotInstalledError, ensure_model
from .openai_http import LLMHTTPError, OpenAIClient
from .replay import ReplayClient, ReplayMissError

# structured output
from .structured import Attempt, StructuredOutputError, complete_structured, extract_json

__all__ = [
    # contract
    "LLMClient", "LLMDependencyError", "LLMError", "LLMRequest", "LLMResponse",
    "RawCompletion", "ScriptedClient", "canonical_json", "request_hash",
    # backends
    "LLMHTTPError", "LlamaCppClient", "OpenAIClient", "llama_cpp_available", "make_client",
    # logging and replay
    "LLMLog", "ReplayClient", "ReplayMissError",
    # structured output
    "Attempt", "StructuredOutputError", "complete_structured", "extract_json",
    # models and embedders
    "MODELS", "ModelIntegrityError", "ModelNotInstalledError", "ensure_model",
    "Embedder", "HashingEmbedder", "MiniLMEmbedder",
]
