"""Runs that never corrupt: idempotent pool writes, validated run-dir files, crash verdicts.

Issue 16 found the pool appending a resumed run's outcomes again (3 -> 6 -> 9 rows), four
processes creating the pool at once duplicating its seed, and a truncated proposal YAML
silently accepted on resume. Each case is reproduced here against the real SQLite file and
the real run directory.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

from simjudge.llm import HashingEmbedder
from simjudge.pipelines.pool import ExemplarPool
from simjudge.pipelines.pool_seed import load_exemplars
from simjudge.tasks.spec import Outcome, Solution


def _solution(task: str = "Open Door") -> Solution:
    return Solution.parse({
        "task": task,
        "scene": {"objects": [{"name": "Door", "asset": "Door-0", "center": [0.7, 0.5]}]},
        "subtasks": [{"name": "pull", "kind": "reward",
                      "code": "def _compute_reward(self):\n    return 0.0, False"}],
    })


def _count(path: Path, table: str) -> int:
    with sqlite3.connect(path) as conn:
        return int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])


def test_resumed_outcomes_are_recorded_once(tmp_path):
    path = tmp_path / "pool.sqlite"
    outcomes = [Outcome((True,), True, out_dir=str(tmp_path / "run" / "exec" / f"cand_{i}"))
                for i in range(3)]
    for _ in range(3):  # the run, then two resumes reading the same checkpoints back
        with ExemplarPool(path, embedder=HashingEmbedder()) as pool:
            for i, outcome in enumerate(outcomes):
                pool.append_success("Open Door", _solution(f"Open Door {i}"), outcome,
                                    source="acquire:template")
    assert _count(path, "outcomes") == 3
    with ExemplarPool(path, embedder=HashingEmbedder()) as pool:
        # another execution of the same solution is a new outcome
        pool.add_task("Open Door 0", _solution("Open Door 0"),
                      Outcome((False,), False, out_dir=str(tmp_path / "other")))
        pool.add_task("Open Door 0", _solution("Open Door 0"), True, key="explicit")
        pool.add_task("Open Door 0", _solution("Open Door 0"), True, key="explicit")
    assert _count(path, "outcomes") == 5


def test_pool_made_before_outcome_keys_is_migrated(tmp_path):
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as conn:  # the schema of pools written before the fix
        conn.executescript("""
            CREATE TABLE outcomes(id INTEGER PRIMARY KEY, solution_id INTEGER NOT NULL,
                task_success INTEGER NOT NULL, subtask_success TEXT NOT NULL DEFAULT '[]',
                run_dir TEXT, created TEXT NOT NULL);
            INSERT INTO outcomes VALUES(1, 1, 1, '[]', 'runs/a', 'then');
            INSERT INTO outcomes VALUES(2, 1, 1, '[]', 'runs/a', 'then');""")
    with ExemplarPool(path, embedder=HashingEmbedder()) as pool:
        pool.add_task("Open Door", _solution(), Outcome((True,), True, out_dir="runs/b"))
        pool.add_task("Open Door", _solution(), Outcome((True,), True, out_dir="runs/b"))
    assert _count(path, "outcomes") == 3


CREATE_AND_SEED = textwrap.dedent("""
    import os, sys, time
    from pathlib import Path
    from simjudge.llm import HashingEmbedder
    from simjudge.pipelines.pool import ExemplarPool
    from simjudge.pipelines.pool_seed import seed_pool
    ready = Path(sys.argv[2])
    (ready / str(os.getpid())).touch()
    deadline = time.time() + 60
    while len(list(ready.iterdir())) < int(sys.argv[3]) and time.time() < deadline:
        time.sleep(0.001)  # all writers start together, once every one has imported
    pool = ExemplarPool(sys.argv[1], embedder=HashingEmbedder())
    if len(pool) == 0:  # what open_pool does on first use
        seed_pool(pool)
    pool.close()
""")


def test_concurrent_creation_seeds_once(tmp_path):
    path = tmp_path / "fresh" / "pool.sqlite"
    ready = tmp_path / "ready"
    ready.mkdir()
    procs = [subprocess.Popen([sys.executable, "-c", CREATE_AND_SEED, str(path), str(ready), "4"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(4)]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err[-2000:]
    seeds = load_exemplars()
    assert _count(path, "solutions") == len(seeds)
    assert _count(path, "outcomes") == len(seeds)
    assert _count(path, "tasks") == len({fields.name for fields, _ in seeds})


# ----------------------------------------------------------------------------------
# run-directory files: checksums, schema, set aside and redone
# ----------------------------------------------------------------------------------
def test_rundir_detects_truncation_corruption_and_bad_schema(tmp_path):
    import pytest

    from simjudge.tasks.spec import RunDir
    from simjudge.tasks.spec.rundir import RunDirCorruptError

    run = RunDir(tmp_path)
    run.write_text("a.yaml", "code: |\n  def f():\n      return 1\n")
    run.write_json("b.json", {"ranking": ["x"]})
    assert run.read_json("b.json", check=lambda d: d["ranking"]) == {"ranking": ["x"]}
    text = run.path("a.yaml").read_text()
    run.path("a.yaml").write_text(text[:20])  # still valid YAML: only the checksum knows
    with pytest.raises(RunDirCorruptError, match=r"a\.yaml is truncated \(20 of the 34 bytes"):
        run.read_text("a.yaml")
    run.path("a.yaml").write_text(text.replace("1", "2"))
    with pytest.raises(RunDirCorruptError, match="does not match the checksum.*delete"):
        run.read_text("a.yaml")
    with pytest.raises(RunDirCorruptError, match="b.json does not hold what it should "
                       r"\(missing key 'details'\)"):
        run.read_json("b.json", check=lambda d: d["details"])
    run.path("c.json").write_bytes(b'{"x": "\xff"}')  # written by hand: no checksum
    with pytest.raises(RunDirCorruptError, match="c.json is not UTF-8"):
        run.read_json("c.json")


def test_load_sets_a_bad_checkpoint_aside_and_reports_it(tmp_path):
    import json

    import pytest

    from simjudge.tasks.spec import RunDir
    from simjudge.tasks.spec.rundir import RunDirRepairWarning

    run = RunDir(tmp_path)
    run.write_json("outcomes/c.json", {"task_success": True})
    run.path("outcomes/c.json").write_text('{"task_success": tr')
    with pytest.warns(RunDirRepairWarning, match=r"c\.json is truncated.*moved it to "
                      r"c\.json\.corrupt and redoing the step"):
        assert run.load("outcomes/c.json", run.read_json) is None
    assert not run.exists("outcomes/c.json")
    assert run.path("outcomes/c.json.corrupt").read_text() == '{"task_success": tr'
    (line,) = run.path("repairs.jsonl").read_text().splitlines()
    assert json.loads(line)["file"] == "outcomes/c.json"
    run.write_json("outcomes/c.json", {"task_success": False})  # the step, redone
    assert run.load("outcomes/c.json", run.read_json) == {"task_success": False}


def test_truncated_config_is_reported_and_rewritten_on_resume(tmp_path):
    import pytest

    from simjudge.tasks.spec import RunDir, RunDirError
    from simjudge.tasks.spec.rundir import RunDirRepairWarning

    run = RunDir(tmp_path)
    run.prepare({"seed": 1}, resume=False)
    run.path("config.json").write_text('{"seed": ')
    with pytest.raises(RunDirError, match="already holds a run"):
        RunDir(tmp_path).prepare({"seed": 1}, resume=False)
    with pytest.warns(RunDirRepairWarning, match="config.json is truncated"):
        RunDir(tmp_path).prepare({"seed": 1}, resume=True)
    assert RunDir(tmp_path).config["seed"] == 1


def test_plain_read_json_names_the_file_and_the_fix(tmp_path):
    import pytest

    from simjudge.tasks.spec import read_json
    from simjudge.tasks.spec.io import CorruptFileError

    path = tmp_path / "outcomes" / "cand_000.json"
    path.parent.mkdir()
    path.write_text('{"subtask_success": [true, fa')
    with pytest.raises(CorruptFileError, match=r"cand_000\.json is not valid JSON .* it may be "
                       r"truncated; delete .*cand_000\.json to have the step"):
        read_json(path)


# ----------------------------------------------------------------------------------
# acquire: resumed runs validate every checkpoint, redo bad steps, pool each outcome once
# ----------------------------------------------------------------------------------
def _acquire(out: Path, pool=None, resume: bool = False, **kwargs):
    from simjudge.pipelines.acquire import acquire
    from simjudge.pipelines.components import make_execute_fn, make_proposer
    from simjudge.pipelines.proposer import TaskRequest
    from simjudge.pipelines.verifiers import make_verifier

    return acquire(TaskRequest.resolve("Open Door"), make_proposer("template", out),
                   kwargs.pop("execute", None) or make_execute_fn("oracle", video=False), out,
                   candidates=2, score=make_verifier("rule"), verifier_name="rule",
                   execute_all=True, pool=pool, resume=resume, progress=False, **kwargs)


def _mtimes(folder: Path, names: list[str]) -> dict[str, int]:
    return {n: (folder / n).stat().st_mtime_ns for n in names}


def test_resumed_acquire_redoes_a_truncated_proposal_and_pools_each_outcome_once(tmp_path):
    import json
    import warnings

    import yaml

    from simjudge.tasks.spec.rundir import RunDirRepairWarning

    out, db = tmp_path / "run", tmp_path / "pool.sqlite"
    with ExemplarPool(db, embedder=HashingEmbedder()) as pool:
        first = _acquire(out, pool)
    assert first.task_success
    n_outcomes = _count(db, "outcomes")
    assert n_outcomes == sum(o.task_success for o in first.executed.values()) >= 1
    yaml_path = out / "proposals" / "cand_000.yaml"
    original = yaml_path.read_text()
    cut = original.index("def _compute_reward") + len("de")  # the case: code "de"
    yaml_path.write_text(original[:cut])
    truncated = yaml.safe_load(yaml_path.read_text())  # still parses: only checksums know
    assert truncated["subtasks"][-1]["code"].endswith("de")
    done = ["outcomes/cand_000.json", "outcomes/cand_001.json", "verification.json"]
    before = _mtimes(out, done)
    for _ in range(2):  # resumed twice: the pool still holds each outcome once
        with ExemplarPool(db, embedder=HashingEmbedder()) as pool, \
                warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            again = _acquire(out, pool, resume=True)
        reported = [str(w.message) for w in caught if w.category is RunDirRepairWarning]
        assert any("cand_000.yaml is truncated" in m for m in reported), reported
        assert yaml_path.read_text() == original  # proposed again: the same candidate
        assert _count(db, "outcomes") == n_outcomes
        yaml_path.write_text(original[:cut])
    assert _mtimes(out, done) == before  # same proposals: nothing downstream was redone
    assert {k: o.verdict for k, o in again.executed.items()} == {
        k: o.verdict for k, o in first.executed.items()}
    repairs = [json.loads(x) for x in (out / "repairs.jsonl").read_text().splitlines()]
    assert {r["file"] for r in repairs} == {"proposals/cand_000.yaml", "proposals/index.json"}
    assert (out / "proposals" / "cand_000.yaml.corrupt").read_text() == original[:cut]


def test_resumed_acquire_redoes_corrupt_verification_and_outcome(tmp_path):
    import pytest

    from simjudge.tasks.spec import Outcome
    from simjudge.tasks.spec.rundir import RunDirRepairWarning

    out = tmp_path / "run"
    first = _acquire(out)
    outcome = out / "outcomes" / "cand_001.json"
    outcome.write_text(outcome.read_text()[:100])  # truncated JSON
    (out / "verification.json").write_text('{"ranking": ["cand_000"], "details": {}}\n')
    (out / ".checksums" / "verification.json.sha256").unlink()  # as an older version wrote it
    kept = _mtimes(out, ["outcomes/cand_000.json"])
    with pytest.warns(RunDirRepairWarning) as caught:
        again = _acquire(out, resume=True)
    messages = " | ".join(str(w.message) for w in caught)
    assert "verification.json does not hold what it should (its ranking ['cand_000'] is not " \
        "an order of this round's candidates" in messages  # the schema check
    assert "cand_001.json is truncated" in messages or \
        "cand_001.json is not valid JSON" in messages  # checksummed, or read by its schema
    assert Outcome.from_dict(__import__("json").loads(outcome.read_text())).verdict == \
        first.executed["cand_001"].verdict  # executed again, same verdict
    assert _mtimes(out, ["outcomes/cand_000.json"]) == kept
    assert again.ranking == first.ranking


def _crash_on_first_candidate(solution, run_dir):
    """Execute fn of the crash test: candidate 0 segfaults its worker (after noting the call)."""
    import os
    import signal

    calls = Path(run_dir).parent.parent / "calls.txt"
    with calls.open("a") as fh:
        fh.write(Path(run_dir).name + "\n")
    if Path(run_dir).name == "cand_000":
        os.kill(os.getpid(), signal.SIGSEGV)
    from simjudge.pipelines.components import make_execute_fn

    return make_execute_fn("oracle", video=False)(solution, run_dir)


def test_a_candidate_that_crashes_its_worker_is_a_verdict_and_resume_skips_it(tmp_path):
    from simjudge.executors import make_executor

    out = tmp_path / "run"
    with make_executor("local", 1, retries=1) as executor:
        first = _acquire(out, executor=executor, execute=_crash_on_first_candidate)
    crashed = first.executed["cand_000"]
    assert not crashed.task_success and "crashed its worker" in crashed.reason
    assert first.executed["cand_001"].task_success
    calls = (out / "calls.txt").read_text().split()
    assert calls.count("cand_000") == 2  # the attempt and its one retry
    with make_executor("local", 1, retries=1) as executor:
        again = _acquire(out, resume=True, executor=executor, execute=_crash_on_first_candidate)
    assert (out / "calls.txt").read_text().split() == calls  # nothing ran again
    assert again.executed["cand_000"].reason == crashed.reason


def test_pool_refuses_huge_task_names():
    import pytest

    from simjudge.pipelines.pool import PoolError

    pool = ExemplarPool(":memory:", embedder=HashingEmbedder())
    with pytest.raises(PoolError, match="at most 200 characters"):
        pool.add_task({"name": "x" * 100_000}, _solution(), True)
    assert pool.list() == []
