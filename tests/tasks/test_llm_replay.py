"""Request hashing, the replay cache and the exchange log."""

from __future__ import annotations

import json

import pytest

from simjudge.llm import (
    LLMLog,
    LLMRequest,
    ReplayClient,
    ReplayMissError,
    ScriptedClient,
    request_hash,
)

MSGS = [{"role": "user", "content": "Open the drawer."}]
BASE = {"temperature": 0.0, "max_tokens": 64, "seed": 1, "json_schema": None, "stop": None}


def key(backend="llamacpp", model="m", messages=MSGS, **changes):
    return request_hash(backend, model, LLMRequest.build(messages, **{**BASE, **changes}))


def test_hash_is_stable_and_canonical():
    assert key() == key()
    assert len(key()) == 64
    reordered = [{"content": "Open the drawer.", "role": "user"}]
    assert key(messages=reordered) == key()
    assert key(temperature=0) == key(temperature=0.0)
    assert key(stop="x") == key(stop=["x"])
    schema_a = {"type": "object", "required": ["a"], "properties": {"a": {"type": "string"}}}
    schema_b = json.loads(json.dumps(dict(reversed(list(schema_a.items())))))
    assert key(json_schema=schema_a) == key(json_schema=schema_b)


@pytest.mark.parametrize("change", [
    {"backend": "openai"}, {"model": "m2"},
    {"messages": [{"role": "user", "content": "Open the drawer!"}]},
    {"messages": [{"role": "system", "content": "Open the drawer."}]},
    {"temperature": 0.1}, {"max_tokens": 65}, {"seed": 2}, {"seed": None},
    {"json_schema": {"type": "object"}}, {"stop": ["\n"]},
])
def test_any_change_changes_hash(change):
    assert key(**change) != key()


def test_request_validation_names_the_problem():
    with pytest.raises(ValueError, match=r"messages\[0\].role must be one of"):
        LLMRequest.build([{"role": "robot", "content": "x"}])
    with pytest.raises(ValueError, match="temperature must be in"):
        LLMRequest.build(MSGS, temperature=3)
    with pytest.raises(ValueError, match="messages is empty"):
        LLMRequest.build([])


def test_record_then_replay_round_trip(tmp_path):
    inner = ScriptedClient(["first reply", "second reply"], name="m")
    recorder = ReplayClient(inner, tmp_path, mode="record")
    a = recorder.complete(MSGS, seed=1)
    b = recorder.complete(MSGS, seed=2)
    assert (a.text, b.text, a.cached) == ("first reply", "second reply", False)
    assert len(recorder.cache) == 2

    player = ReplayClient(ScriptedClient([], name="m"), tmp_path, mode="replay")
    ra, rb = player.complete(MSGS, seed=1), player.complete(MSGS, seed=2)
    assert (ra.text, rb.text) == (a.text, b.text)
    assert ra.cached and ra.request_hash == a.request_hash
    assert (ra.backend, ra.model, ra.usage) == (a.backend, a.model, a.usage)
    stored = json.loads(recorder.cache.path(a.request_hash).read_text())
    assert stored["request"]["messages"] == MSGS and stored["response"]["text"] == "first reply"


def test_replay_miss_raises_with_hash_and_fix(tmp_path):
    player = ReplayClient(ScriptedClient([], name="m"), tmp_path, mode="replay")
    with pytest.raises(ReplayMissError) as info:
        player.complete(MSGS)
    expected = request_hash("scripted", "m", LLMRequest.build(MSGS))
    assert info.value.key == expected
    assert expected in str(info.value) and "mode='record'" in str(info.value)


def test_auto_calls_once_and_record_overwrites(tmp_path):
    inner = ScriptedClient(["v1", "v2"], name="m")
    auto = ReplayClient(inner, tmp_path, mode="auto")
    assert [auto.complete(MSGS).text for _ in range(3)] == ["v1", "v1", "v1"]
    assert len(inner.calls) == 1
    assert ReplayClient(inner, tmp_path, mode="record").complete(MSGS).text == "v2"
    assert auto.complete(MSGS).text == "v2"


def test_cache_is_keyed_by_inner_model(tmp_path):
    ReplayClient(ScriptedClient(["a"], name="m1"), tmp_path, mode="record").complete(MSGS)
    with pytest.raises(ReplayMissError):
        ReplayClient(ScriptedClient([], name="m2"), tmp_path, mode="replay").complete(MSGS)


def test_bad_mode():
    with pytest.raises(ValueError, match="mode must be one of"):
        ReplayClient(ScriptedClient([]), "x", mode="playback")


def test_log_records_every_exchange(tmp_path):
    log = LLMLog(tmp_path / "run" / "llm.jsonl")
    client = ReplayClient(ScriptedClient(["hi"], name="m"), tmp_path / "c", log=log)
    first = client.complete(MSGS, seed=3)
    client.complete(MSGS, seed=3)
    records = log.read()
    assert [r["cached"] for r in records] == [False, True]
    assert {r["request_hash"] for r in records} == {first.request_hash}
    assert records[0]["text"] == "hi" and records[0]["request"]["seed"] == 3
    assert records[0]["time"].endswith("+00:00") and records[0]["latency_s"] >= 0
    assert client.describe()["replay"]["mode"] == "auto"


def test_log_without_content(tmp_path):
    log = LLMLog(tmp_path / "llm.jsonl", include_content=False)
    ScriptedClient(["secret"], log=log).complete(MSGS)
    (record,) = log.read()
    assert "text" not in record and "request" not in record and record["backend"] == "scripted"
