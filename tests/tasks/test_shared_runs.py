"""Several processes resuming one run share its jobs (issue 39, item 6): each job runs once,
a dead writer's claims are taken over, every process ends with all results."""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from simjudge.executors import JobStore, make_executor
from simjudge.executors.claims import ClaimBook
from tests.tasks.shared_job_helpers import jobs, writer

pytestmark = pytest.mark.timeout(300)


def _ledger(path: Path) -> Counter:
    return Counter(line.split()[0] for line in path.read_text().splitlines())


def test_four_writers_run_each_job_once_and_each_gets_every_result(tmp_path):
    root, ledger = tmp_path / "run", tmp_path / "ledger.txt"
    ctx = multiprocessing.get_context("spawn")
    outs = [tmp_path / f"out{i}.txt" for i in range(4)]
    procs = [ctx.Process(target=writer, args=(str(root), str(ledger), 16, 0.15, str(o)))
             for o in outs]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=200)
        assert p.exitcode == 0
    runs = _ledger(ledger)
    assert sorted(runs) == [f"j{i:02d}" for i in range(16)]
    assert set(runs.values()) == {1}, f"jobs run more than once: {runs}"
    pids = {line.split()[1] for line in ledger.read_text().splitlines()}
    assert len(pids) >= 2, "the work was not shared"
    expected = "\n".join(f"j{i:02d} True {i * i}" for i in range(16))
    assert all(o.read_text() == expected for o in outs)


def test_the_claims_of_a_dead_writer_are_taken_over_at_once(tmp_path):
    root, ledger = tmp_path / "run", tmp_path / "ledger.txt"
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    book = ClaimBook(root, owner=f"{os.uname().nodename}:{dead.pid}:gone")
    for i in range(4):
        assert book.claim(f"r/j{i:02d}.json")  # JobStore names: <results>/<key>.json
    start = time.monotonic()
    results = make_executor("serial").map(jobs(ledger, 4, 0.0),
                                          JobStore(root, results="r", shared=True),
                                          progress=False)
    assert [r.ok for r in results] == [True] * 4
    assert time.monotonic() - start < 30
    assert set(_ledger(ledger).values()) == {1}


def test_a_live_writers_claim_is_waited_for_until_its_lease_lapses(tmp_path):
    root, ledger = tmp_path / "run", tmp_path / "ledger.txt"
    # alive (this very process) but another writer: its claim holds for the lease
    other = ClaimBook(root, owner=f"{os.uname().nodename}:{os.getpid()}:other", lease_s=1.5)
    assert other.claim("r/j00.json")
    start = time.monotonic()
    results = make_executor("serial").map(jobs(ledger, 3, 0.0),
                                          JobStore(root, results="r", shared=True),
                                          progress=False)
    assert [r.ok for r in results] == [True] * 3
    assert time.monotonic() - start >= 1.0  # j00 waited for the lease, then ran here
    assert _ledger(ledger) == Counter({"j00": 1, "j01": 1, "j02": 1})


def test_a_store_that_is_not_shared_writes_no_claims(tmp_path):
    make_executor("serial").map(jobs(tmp_path / "ledger.txt", 2, 0.0),
                                JobStore(tmp_path / "run", results="r"), progress=False)
    assert not (tmp_path / "run" / "claims.sqlite").exists()


def test_two_audits_resuming_one_run_share_its_episodes(tmp_path):
    out = tmp_path / "run"
    argv = [sys.executable, "-m", "simjudge.cli", "audit", "--policy", "a=zero",
            "--policy", "b=random", "--tasks", "OpenDrawer-v0", "--seeds", "6", "--videos", "0",
            "--executor", "serial", "--no-report", "--bootstrap", "50", "--epsilon", "0.01",
            "--out", str(out)]
    first = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while not list(out.glob("results/*.json")) and first.poll() is None:
        assert time.monotonic() < deadline, "the first audit wrote no results"
        time.sleep(0.05)
    second = subprocess.run([*argv, "--resume"], capture_output=True, text=True, timeout=280)
    assert second.returncode == 0, second.stderr[-2000:]
    assert first.wait(280) == 0, first.stderr.read().decode()[-2000:] if first.stderr else ""
    audit = json.loads((out / "audit.json").read_text())
    assert audit["episodes"] == 12 and not audit["failed_jobs"]
    assert len(list(out.glob("results/*.json"))) == 12
    assert not list(out.glob("results/*.corrupt"))
