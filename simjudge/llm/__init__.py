"""simjudge.llm: one LLM client interface, several backends, every exchange logged.

Backends: :class:`OpenAIClient` (any OpenAI-compatible HTTP server), :class:`LlamaCppClient`
(embedded GGUF, the offline default) and :class:`ScriptedClient` (tests). :class:`ReplayClient`
wraps any of them with a content-addressed cache (record / replay / auto) so tests and
demos are deterministic; :class:`LLMLog` appends every exchange to JSONL;
:func:`complete_structured` gets validated JSON out of weak models; :func:`make_client`
builds a client from ``backend:model`` and environment variables. The sentence embedders
of the exemplar pool live here too.
"""

from __future__ import annotations

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
from .embeddings import Embedder, HashingEmbedder, MiniLMEmbedder
from .factory import make_client
from .llamacpp import LlamaCppClient, llama_cpp_available
from .log import LLMLog
from .models import MODELS, ModelIntegrityError, ModelNotInstalledError, ensure_model
from .openai_http import LLMHTTPError, OpenAIClient
from .replay import ReplayClient, ReplayMissError
from .structured import Attempt, StructuredOutputError, complete_structured, extract_json

__all__ = [
    # contract
    "LLMClient", "LLMDependencyError", "LLMError", "LLMRequest", "LLMResponse",
    "RawCompletion", "canonical_json", "request_hash",
    # backends and construction
    "LLMHTTPError", "LlamaCppClient", "OpenAIClient", "ScriptedClient",
    "llama_cpp_available", "make_client",
    # logging and replay
    "LLMLog", "ReplayClient", "ReplayMissError",
    # structured output
    "Attempt", "StructuredOutputError", "complete_structured", "extract_json",
    # local models and sentence embedders
    "MODELS", "ModelIntegrityError", "ModelNotInstalledError", "ensure_model",
    "Embedder", "HashingEmbedder", "MiniLMEmbedder",
]
