"""The arena's SQLite store: schema, idempotent writes, refusals, resume, concurrent writers."""

from __future__ import annotations

import multiprocessing
import sqlite3

import pytest

from simjudge.envs.errors import SimjudgeError
from simjudge.judges.metrics.rankings import LOSS, TIE, WIN
from simjudge.pipelines.arena.sampling import sample_match
from simjudge.pipelines.arena.store import ArenaStore, ArenaStoreError, MatchResult, PlannedMatch


def _match(idx, a="good", b="bad", task="OpenDrawer-v0"):
    return PlannedMatch(f"m{idx:05d}", idx, task, 100 + idx, f"ha{idx}", f"hb{idx}", a, b)


def test_schema_is_a_real_sqlite_file(tmp_path):
    path = tmp_path / "arena.sqlite"
    ArenaStore(path).close()
    with sqlite3.connect(path) as db:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        mode = db.execute("PRAGMA journal_mode").fetchone()[0]
    assert {"meta", "policies", "matches", "sides", "results"} <= tables
    assert mode == "wal"


def test_plan_and_record_are_idempotent(tmp_path):
    store = ArenaStore(tmp_path / "arena.sqlite")
    store.register_policies({"good": "oracle", "bad": "zero"})
    store.register_policies({"good": "oracle"})  # same spec again: fine
    assert store.plan(_match(0)) and not store.plan(_match(0))
    result = MatchResult("m00000", "oracle", 100.0, 20.0, "A", "A reached the goal",
                         {"rule": "success"})
    assert store.record(result) and not store.record(result)
    replayed = MatchResult("m00000", "oracle", 100.0, 20.0, "A", "A reached the goal",
                           {"rule": "success", "seconds": 0.5})  # other timings, same verdict
    assert not store.record(replayed)
    assert store.counts() == {"pending": 0, "done": 1, "failed": 0}
    [row] = store.results()
    assert row["policy_a"] == "good" and row["details"] == {"rule": "success"}
    assert store.eval_counts() == {"bad": 1, "good": 1}


def test_conflicting_writes_are_refused_with_the_fix(tmp_path):
    store = ArenaStore(tmp_path / "arena.sqlite")
    store.register_policies({"good": "oracle", "bad": "zero"})
    with pytest.raises(ArenaStoreError, match="another name"):
        store.register_policies({"good": "random"})
    store.plan(_match(0))
    with pytest.raises(ArenaStoreError, match="planned differently"):
        store.plan(_match(0, task="TurnFaucet-v0"))
    store.record(MatchResult("m00000", "oracle", 100.0, 20.0, "A", "x"))
    with pytest.raises(ArenaStoreError, match="different verdict"):
        store.record(MatchResult("m00000", "oracle", 100.0, 20.0, "B", "x"))
    with pytest.raises(ArenaStoreError, match="plan it first"):
        store.record(MatchResult("m09999", "oracle", 1.0, 2.0, "B", "x"))
    with pytest.raises(SimjudgeError, match="preference"):
        MatchResult("m00000", "oracle", 1.0, 2.0, "left")


def test_comparisons_unseal_the_handles_and_skip_failures(tmp_path):
    store = ArenaStore(tmp_path / "arena.sqlite")
    store.register_policies({"good": "oracle", "bad": "zero"})
    for idx, pref in enumerate(["A", "B", "tie"]):
        store.plan(_match(idx, *(("good", "bad") if idx != 1 else ("bad", "good"))))
        store.record(MatchResult(f"m{idx:05d}", "oracle", 50.0, 40.0, pref, "r"))
    store.plan(_match(3))
    store.record(MatchResult("m00003", "oracle", error="policy crashed"))
    comps = store.comparisons()
    assert [(c.a, c.b, c.outcome) for c in comps] == [("good", "bad", WIN), ("bad", "good", LOSS),
                                                      ("good", "bad", TIE)]
    assert comps[0].progress_a == 50.0 and comps[0].task == "OpenDrawer-v0"
    assert store.counts()["failed"] == 1
    blind = store.planned()[0].blind()
    assert "good" not in repr(blind) and "bad" not in repr(blind)


def test_reopening_resumes_the_same_database(tmp_path):
    path = tmp_path / "arena.sqlite"
    with ArenaStore(path) as store:
        store.register_policies({"good": "oracle", "bad": "zero"})
        store.plan(_match(0))
        store.plan(_match(1))
        store.record(MatchResult("m00000", "oracle", 1.0, 0.0, "A", ""))
    with ArenaStore(path) as store:
        assert [m.match_id for m in store.planned("pending")] == ["m00001"]
        assert store.policies() == {"bad": "zero", "good": "oracle"}


def _writer(path, offset, n):
    store = ArenaStore(path)
    store.register_policies({"good": "oracle", "bad": "zero"})
    for k in range(n):
        idx = offset + k
        store.plan(_match(idx))
        store.record(MatchResult(f"m{idx:05d}", "oracle", 1.0, 0.0, "A", ""))
    store.close()


def test_two_processes_append_at_once(tmp_path):
    path = tmp_path / "arena.sqlite"
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, offset, 40)) for offset in (0, 1000)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
        assert p.exitcode == 0
    with ArenaStore(path) as store:
        assert store.counts()["done"] == 80
        assert len(store.comparisons()) == 80


def test_sampling_favours_the_under_evaluated_and_is_deterministic():
    counts = {"new": 0, "old1": 300, "old2": 300, "old3": 300}
    draws = [sample_match(i, counts, ["OpenDrawer-v0", "TurnFaucet-v0"], run_seed=0)
             for i in range(300)]
    new_share = sum("new" in (m.policy_a, m.policy_b) for m in draws) / len(draws)
    assert new_share > 0.8  # uniform pairs would include it half of the time
    assert {m.policy_a for m in draws if "new" in (m.policy_a, m.policy_b)} >= {"new", "old1"}
    assert {m.task for m in draws} == {"OpenDrawer-v0", "TurnFaucet-v0"}
    assert len({m.handle_a for m in draws} | {m.handle_b for m in draws}) == 600
    again = sample_match(7, counts, ["OpenDrawer-v0", "TurnFaucet-v0"], run_seed=0)
    assert again == draws[7]
    assert sample_match(7, counts, ["OpenDrawer-v0"], run_seed=1) != draws[7]
    with pytest.raises(ValueError, match="two policies"):
        sample_match(0, {"only": 0}, ["OpenDrawer-v0"], run_seed=0)


def _opener(path, barrier):
    barrier.wait()
    with ArenaStore(path) as store:
        store.register_policies({"good": "oracle"})


def test_many_processes_create_one_new_database_at_once(tmp_path):
    # The journal-mode switch on a new file does not always wait for the busy handler;
    # every opener must still succeed (this failed on CI as "database is locked").
    ctx = multiprocessing.get_context("fork")
    for trial in range(5):
        path = tmp_path / f"new{trial}.sqlite"
        barrier = ctx.Barrier(4)
        procs = [ctx.Process(target=_opener, args=(path, barrier)) for _ in range(4)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(timeout=60)
            assert p.exitcode == 0
