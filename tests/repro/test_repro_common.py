"""The reproduction suite's shared layer: stores, intervals, result files, LLM specs."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

from repro.common import (
    SCORED_KEYS,
    ItemStore,
    bootstrap_ci,
    compare_scored,
    diff_values,
    llm_client,
    rounded,
    wilson,
    write_claim,
)
from simjudge.llm import ReplayMissError


def test_item_store_round_trips_and_lists_what_a_resumed_run_skips(tmp_path):
    store = ItemStore("claim", "part:a", root=tmp_path)
    assert store.keys() == [] and not store.has("x/1")
    store.put("x/1", {"score": np.float64(1 / 3), "n": np.int64(4), "ok": True})
    store.put("a", [1.0, None])
    assert store.has("x/1") and store.keys() == ["a", "x_1"]
    assert store.get("x/1") == {"score": 0.333333, "n": 4, "ok": True}
    assert (tmp_path / "claim" / "part_a").is_dir()
    with pytest.raises(FileNotFoundError, match="python -m repro"):
        store.get("missing")


def test_rounded_refuses_what_json_cannot_hold():
    assert rounded({"a": (1.23456789, float("nan"))}) == {"a": [1.234568, None]}
    with pytest.raises(TypeError, match="cannot store"):
        rounded({"a": object()})


def test_bootstrap_is_seeded_and_brackets_the_mean():
    values = [0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0]
    first, again = bootstrap_ci(values), bootstrap_ci(values)
    assert first == again and first[0] < np.mean(values) < first[1]
    assert bootstrap_ci(values, seed=1) != first
    with pytest.raises(ValueError):
        bootstrap_ci([])


def test_wilson_interval():
    lo, hi = wilson(5, 10)
    assert lo < 0.5 < hi and round(lo, 3) == 0.237 and round(hi, 3) == 0.763
    assert wilson(0, 0) == [0.0, 1.0]


def test_compare_scored_finds_every_changed_number():
    stored = {k: {} for k in SCORED_KEYS}
    stored["simjudge"] = {"acc": 0.5, "curve": [1.0, 2.0]}
    fresh = json.loads(json.dumps(stored))
    assert compare_scored(stored, fresh) == []
    fresh["simjudge"]["curve"][1] = 2.5
    fresh["n"] = {"acc": 3}
    diffs = compare_scored(stored, fresh)
    assert len(diffs) == 2 and any("simjudge.curve[1]" in d for d in diffs)
    assert diff_values({"a": 1.0000001}, {"a": 1.0}) == []  # rounded to 6 digits first


def test_write_claim_records_the_keys_the_checks_read(tmp_path):
    scored = {"title": "t", "paper": {"x": 1}, "simjudge": {"x": 0.5}, "n": {"x": 4},
              "ci95": {"x": [0.1, 0.9]}, "verified": True, "reproduced": "no",
              "details": {}, "notes": "why"}
    path = write_claim("demo", scored, settings={"k": 1}, started=time.perf_counter(),
                       load_before=[0.1, 0.2, 0.3], out=tmp_path / "demo.json")
    data = json.loads(path.read_text())
    for key in ("paper", "simjudge", "n", "ci95", "verified", "commit", "settings", "machine",
                "load_before", "load_after", "versions", "wall_s", "claim"):
        assert key in data, key
    assert compare_scored(data, scored) == []
    with pytest.raises(KeyError, match="missing"):
        write_claim("demo", {"paper": {}}, settings={}, started=0.0, load_before=[],
                    out=tmp_path / "x.json")


def test_replay_spec_serves_only_the_cache(tmp_path):
    client = llm_client("replay", "demo", "smollm2-135m", cache=tmp_path)
    assert client.model == "smollm2-135m"
    with pytest.raises(ReplayMissError, match="no cached reply"):
        client.complete([{"role": "user", "content": "hi"}], max_tokens=4)
    with pytest.raises(ValueError, match="unknown --llm"):
        llm_client("gpt", "demo", "smollm2-135m")
