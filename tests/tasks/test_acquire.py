"""The acquisition loop end to end: template run, replay determinism, kill and resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from simjudge.pipelines.acquire import RunDirError, acquire
from simjudge.pipelines.components import make_execute_fn, make_proposer
from simjudge.pipelines.pool import ExemplarPool
from simjudge.pipelines.proposer import TaskRequest
from simjudge.pipelines.verifiers import make_verifier

RECORDED = Path(__file__).parent / "data" / "llm_cache"
"""Exchanges recorded from the real local model (see tests/tasks/data/README.md)."""


def _files(folder: Path) -> dict[str, float]:
    return {str(p.relative_to(folder)): p.stat().st_mtime_ns
            for p in folder.rglob("*") if p.is_file()}


def test_template_acquire_succeeds_and_pools(tmp_path):
    from simjudge.llm import HashingEmbedder

    pool = ExemplarPool(tmp_path / "pool.sqlite", embedder=HashingEmbedder())
    request = TaskRequest.resolve("Open Door")
    result = acquire(
        request, make_proposer("template", tmp_path), make_execute_fn("mpc", video=False),
        tmp_path / "run", candidates=2, score=make_verifier("rule"), verifier_name="rule",
        pool=pool, progress=False,
    )
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["task_success"] == result.task_success
    assert result.task_success, summary["candidates"]
    assert [t.name for t in pool.list()] == ["Open Door"]
    with pytest.raises(RunDirError, match="--resume"):
        acquire(request, make_proposer("template", tmp_path), make_execute_fn("mpc"),
                tmp_path / "run", candidates=2, progress=False)


@pytest.mark.skipif(not RECORDED.exists(), reason="no recorded LLM exchanges")
def test_replayed_llm_run_is_deterministic(tmp_path):
    runs = []
    for name in ("a", "b"):
        out = tmp_path / name
        proposer = make_proposer("replay", out, cache_dir=RECORDED)
        acquire(TaskRequest.resolve("Open Drawer"), proposer, make_execute_fn("mpc", video=False),
                out, candidates=2, score=make_verifier("rule"), verifier_name="rule",
                progress=False)
        summary = json.loads((out / "summary.json").read_text())
        summary.pop("wall_time_s")
        proposals = sorted((out / "proposals").glob("cand_*.yaml"))
        runs.append((summary, [p.read_text() for p in proposals]))
    assert runs[0] == runs[1]
    assert runs[0][1], "the recorded exchanges produced no valid proposal"


def _cli(out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "simjudge.cli", "acquire", "--task", "Open Door",
            "--proposer", "template", "--candidates", "3", "--execute", "all",
            "--reward-solver", "mpc", "--no-pool", "--out", str(out), *extra]


def test_kill_and_resume_loses_and_repeats_nothing(tmp_path):
    out = tmp_path / "run"
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(_cli(out), env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    first = out / "outcomes" / "cand_000.json"
    deadline = time.time() + 300
    while not first.exists() and proc.poll() is None and time.time() < deadline:
        time.sleep(0.2)
    assert first.exists(), "the run never finished its first candidate"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not (out / "summary.json").exists()
    before = _files(out)
    done = subprocess.run(_cli(out, "--resume"), env=env, capture_output=True, text=True,
                          timeout=600)
    assert (out / "summary.json").exists(), done.stderr[-2000:]
    after = _files(out)
    # nothing finished before the kill was redone: those files are untouched
    finished = [f for f in before if f.startswith(("outcomes/", "proposals/"))
                or f == "verification.json"]
    assert finished and all(after[f] == before[f] for f in finished)
    summary = json.loads((out / "summary.json").read_text())
    assert all(c["executed"] for c in summary["candidates"])
    # the resumed run equals an uninterrupted one
    clean = tmp_path / "clean"
    subprocess.run(_cli(clean), env=env, capture_output=True, text=True, timeout=600, check=False)
    reference = json.loads((clean / "summary.json").read_text())
    for key in ("task_success", "ATSR", "ASSR"):
        assert summary[key] == reference[key]
    assert [c["subtask_success"] for c in summary["candidates"]] == [
        c["subtask_success"] for c in reference["candidates"]]
