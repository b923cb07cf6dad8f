"""Arena runs end to end: resume and extend, failures as verdicts, CLI, report in Chromium."""

from __future__ import annotations

import json
import sqlite3

import pytest

from simjudge.cli import main
from simjudge.pipelines.arena import ArenaStore, play_arena
from simjudge.tasks.spec.rundir import RunDirError

POLICIES = {"good": "oracle", "wrong": "oracle-wrong-target", "idle": "zero"}


def broken(obs):
    """A policy that crashes on its first observation (for the failure test)."""
    raise RuntimeError("this policy is broken")


def _rows(path):
    with sqlite3.connect(path) as db:
        return db.execute("SELECT r.match_id, preference, progress_a, progress_b, recorded_at "
                          "FROM results r ORDER BY match_id").fetchall()


def test_resume_extends_without_repeating(tmp_path):
    out = tmp_path / "arena"
    first = play_arena(out, POLICIES, ["OpenDrawer-v0"], matches=4, seed=3, progress=False)
    assert first["counts"] == {"pending": 0, "done": 4, "failed": 0}
    before = _rows(out / "arena.sqlite")
    # a kill after a job finished but before its verdict reached the database: the job's
    # result file is still there and is used, not re-run
    with sqlite3.connect(out / "arena.sqlite") as db:
        db.execute("DELETE FROM results WHERE match_id = 'm00003'")
        db.execute("UPDATE matches SET status = 'pending' WHERE match_id = 'm00003'")
    stamp = (out / "match_results" / "m00003.json").stat().st_mtime_ns
    again = play_arena(out, POLICIES, ["OpenDrawer-v0"], matches=6, seed=3, resume=True,
                      progress=False)
    assert again["counts"]["done"] == 6
    after = _rows(out / "arena.sqlite")
    assert after[:3] == before[:3]  # untouched, not re-recorded
    assert after[3][:4] == before[3][:4]
    assert (out / "match_results" / "m00003.json").stat().st_mtime_ns == stamp
    with ArenaStore(out / "arena.sqlite") as store:
        planned = store.planned()
    assert [m.idx for m in planned] == list(range(6))
    with pytest.raises(RunDirError, match="seed"):
        play_arena(out, POLICIES, ["OpenDrawer-v0"], matches=6, seed=4, resume=True,
                  progress=False)


def test_a_crashing_policy_is_a_recorded_failure(tmp_path):
    out = tmp_path / "arena"
    policies = {"good": "oracle", "broken": "tests.tasks.test_arena_run:broken"}
    summary = play_arena(out, policies, ["OpenDrawer-v0"], matches=3, progress=False)
    assert summary["counts"] == {"pending": 0, "done": 0, "failed": 3}
    with ArenaStore(out / "arena.sqlite") as store:
        [row, *_] = store.results()
    assert "broken" in row["error"] and row["preference"] is None


def test_cli_run_rank_validate_and_report(tmp_path):
    out = tmp_path / "arena"
    args = ["arena", "run", "--policy", "good=oracle", "--policy", "wrong=oracle-wrong-target",
            "--policy", "idle=zero", "--tasks", "OpenDrawer-v0", "--matches", "9",
            "--executor", "serial", "--bootstrap", "20", "--out", str(out)]
    assert main(args) == 0
    ranked = json.loads((out / "rankings.json").read_text())
    assert set(ranked["models"]) == {"davidson", "bt", "em", "elo", "prog"}
    assert ranked["models"]["davidson"]["rows"][0]["policy"] == "good"
    assert main(["arena", "rank", str(out), "--models", "davidson,elo", "--bootstrap", "10",
                 "--no-report"]) == 0
    assert main(["arena", "validate", str(out), "--oracle-seeds", "2", "--budgets", "4,8",
                 "--subsets", "5", "--executor", "serial", "--models", "davidson,prog"]) == 0
    found = json.loads((out / "validation.json").read_text())
    assert found["agreement"]["davidson"]["top1"] == 1.0
    assert {r["budget"] for r in found["efficiency"]} == {4, 8}
    assert main(["arena", "run", "--policy", "solo=oracle", "--tasks", "OpenDrawer-v0",
                 "--out", str(tmp_path / "x")]) == 2
    assert main(["arena", "rank", str(tmp_path / "nothing-here")]) == 2
    assert main(["arena", "run", "--policy", "a=oracle", "--policy", "b=zero", "--tasks",
                 "NoSuchTask-v0", "--out", str(tmp_path / "y")]) == 2
    html = (out / "report.html").read_text()
    for anchor in ("arena-overview", "arena-rankings", "arena-validation", "arena-matches"):
        assert f'id="{anchor}"' in html
    _check_in_browser(out / "report.html")


def _check_in_browser(page):
    from simjudge.pipelines.report.browser import chromium_path, inspect_page

    if chromium_path() is None:
        pytest.skip("Debian's chromium is not installed (apt-get install -y chromium)")
    result = inspect_page(page)
    assert result.errors == [], result.errors
    counts = result.counts
    assert counts["ready"] == "complete" and counts["title"] == "simjudge arena"
    assert {"Arena overview", "Rankings", "Validation against the simulator oracle",
            "Matches"} <= set(counts["h2"])
    assert {"Kendall τ", "MMRV", "top-1", "rank 95% CI", "preference", "reason"} <= set(counts["th"])
    assert counts["table"] >= 10 and counts["svg"] == 2  # rankings and sample-efficiency figures


def _arena_process(out):
    play_arena(out, POLICIES, ["OpenDrawer-v0"], matches=8, seed=5, resume=True, progress=False)


@pytest.mark.slow
def test_two_processes_run_the_same_arena(tmp_path):
    import multiprocessing

    out = tmp_path / "arena"
    play_arena(out, POLICIES, ["OpenDrawer-v0"], matches=1, seed=5, progress=False)
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_arena_process, args=(out,)) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=300)
        assert p.exitcode == 0
    with ArenaStore(out / "arena.sqlite") as store:
        assert store.counts() == {"pending": 0, "done": 8, "failed": 0}
        assert [m.idx for m in store.planned()] == list(range(8))


def test_prefer_decides_matches_with_the_preference_judge(tmp_path):
    """`--prefer preference`: every match is decided by the judge from the sides' Φ traces."""
    out = tmp_path / "arena"
    args = ["arena", "run", "--policy", "good=oracle", "--policy", "idle=zero", "--tasks",
            "OpenDrawer-v0", "--matches", "3", "--executor", "serial", "--prefer",
            "preference:statistic=final", "--no-report", "--out", str(out)]
    assert main(args) == 0
    with ArenaStore(out / "arena.sqlite") as store:
        rows = store.results()
    assert len(rows) == 3
    for row in rows:
        assert row["details"]["rule"] == "preference"
        # the oracle opens the drawer, the idle policy does not: the final Φ decides
        assert row["preference"] == ("A" if row["policy_a"] == "good" else "B"), row
        assert row["reason"]
    config = json.loads((out / "config.json").read_text())
    assert config["prefer"] == "preference:statistic=final"
    with pytest.raises(RunDirError, match="prefer"):  # a resume must keep the same rule
        play_arena(out, {"good": "oracle", "idle": "zero"}, ["OpenDrawer-v0"], matches=3,
                  resume=True, progress=False)
    assert main(["arena", "run", "--policy", "a=oracle", "--policy", "b=zero", "--tasks",
                 "OpenDrawer-v0", "--prefer", "privileged", "--out", str(tmp_path / "z")]) == 2


def test_the_opd_epsilon_is_the_runs_and_is_recorded_with_each_match(tmp_path):
    import json

    import pytest as _pytest

    from simjudge.pipelines.arena.match import ArenaEvaluatorError

    out = tmp_path / "arena"
    play_arena(out, POLICIES, ["OpenDrawer-v0"], matches=1, seed=3, progress=False, epsilon=0.2)
    results = [json.loads(p.read_text()) for p in (out / "match_results").rglob("*.json")]
    rules = [r["details"]["tie_rule"] for r in _walk(results) if "tie_rule" in r.get("details", {})]
    assert rules and all(rule["epsilon"] == 0.2 for rule in rules)
    with _pytest.raises(ArenaEvaluatorError, match="epsilon"):
        play_arena(tmp_path / "bad", POLICIES, ["OpenDrawer-v0"], matches=1, epsilon=-1.0)


def _walk(items):
    for item in items:
        if isinstance(item, dict):
            yield item
            yield from _walk(item.values())
        elif isinstance(item, list):
            yield from _walk(item)


@pytest.mark.slow
def test_four_concurrent_writers_play_each_match_once(tmp_path):
    """Why: four concurrent `arena run --resume` processes on one run each played all the
    matches, and two raced on the same match_results file."""
    import re
    import subprocess
    import sys

    out = tmp_path / "arena"
    argv = ["--policy", "good=oracle", "--policy", "idle=zero", "--tasks", "OpenDrawer-v0",
            "--horizon", "20", "--seed", "7", "--no-report", "--out", str(out)]
    code = "import sys; from simjudge.cli import main; sys.exit(main(sys.argv[1:]))"
    first = subprocess.run([sys.executable, "-c", code, "arena", "run", "--matches", "2", *argv],
                           capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr[-2000:]
    writers = [subprocess.Popen([sys.executable, "-c", code, "arena", "run", "--matches", "14",
                                 "--resume", *argv], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True) for _ in range(4)]
    outputs = [w.communicate(timeout=600) for w in writers]
    assert all(w.returncode == 0 for w in writers), [e[-1500:] for _, e in outputs]
    played = [int(re.search(r"\((\d+) by this process\)", o).group(1)) for o, _ in outputs]
    assert sum(played) == 12, played  # each of the 12 new matches once, by one writer
    with ArenaStore(out / "arena.sqlite") as store:
        assert store.counts() == {"pending": 0, "done": 14, "failed": 0}
    assert len(list((out / "match_results").rglob("*.json"))) >= 14


def test_the_pipeline_takes_the_commands_config(tmp_path):
    """One convention: `arena run` is `run_arena(ArenaRunConfig)`, as `audit` is `run_audit`."""
    from simjudge.pipelines.arena import ArenaRunConfig, run_arena
    from simjudge.pipelines.arena.match import ArenaEvaluatorError
    from simjudge.policies import PolicyError

    out = tmp_path / "arena"
    config = ArenaRunConfig(policy=("good=oracle", "idle=zero"), tasks=("OpenDrawer-v0",),
                            matches=2, seed=1, executor="serial", out=str(out), report=False)
    summary = run_arena(config, progress=False)
    assert summary["counts"] == {"pending": 0, "done": 2, "failed": 0}
    recorded = json.loads((out / "config.json").read_text())
    assert recorded["command"] == "arena run" and recorded["executor"] == "serial"
    assert recorded["policies"] == {"good": "oracle", "idle": "zero"}
    with pytest.raises(ArenaEvaluatorError, match="two policies"):
        run_arena(ArenaRunConfig(policy=("good=oracle",), tasks=("OpenDrawer-v0",),
                                 out=str(tmp_path / "one")), progress=False)
    with pytest.raises(PolicyError, match="NoSuchTask"):
        run_arena(ArenaRunConfig(policy=("a=oracle", "b=zero"), tasks=("NoSuchTask-v0",),
                                 out=str(tmp_path / "bad")), progress=False)
    assert not (tmp_path / "bad").exists()


def test_the_validation_oracle_plays_the_arenas_own_worlds():
    """A --no-randomize arena is validated on its fixed start, a randomized one per seed."""
    from simjudge.pipelines.arena.oracle import oracle_cell

    fixed = [oracle_cell("OpenDrawer-v0", s, {"good": "oracle"}, horizon=30, randomize=False)
             for s in (1, 2)]
    varied = [oracle_cell("OpenDrawer-v0", s, {"good": "oracle"}, horizon=30) for s in (1, 2)]
    assert fixed[0]["good"]["progress"] == fixed[1]["good"]["progress"]
    assert varied[0]["good"]["progress"] != varied[1]["good"]["progress"]
