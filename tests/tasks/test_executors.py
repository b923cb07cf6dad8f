"""The serial and local executors: order, determinism, crashes, kills and resumes.

Everything runs for real: worker processes, segfaults (a read of address 0), SIGKILLed
workers and drivers, the dataset builder and the acquisition loop on the PyBullet
simulator. The Ray executor's tests are in ``test_executors_ray.py``.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

from simjudge.executors import (
    ExecutorError,
    Job,
    JobStore,
    make_executor,
    resume_identity,
)
from simjudge.executors.probe import (
    crash,
    crash_once,
    imports,
    seeded_sum,
    slow_sum,
    wait_for_file,
)
from simjudge.pipelines.acquire import acquire
from simjudge.pipelines.components import make_execute_fn, make_proposer
from simjudge.pipelines.dataset import build_dataset
from simjudge.pipelines.proposer import TaskRequest
from tests.tasks.executor_helpers import (
    DRIVER,
    CrashOnCandidate,
    attempts_logged,
    run_contents,
)


def _sums(n: int = 6) -> list[Job]:
    return [Job(f"job_{s:02d}", seeded_sum, kwargs={"n": 200, "seed": s}) for s in range(n)]


def test_local_results_come_back_in_job_order_and_resume_without_rerunning(tmp_path):
    jobs = [Job(f"job_{s:02d}", slow_sum, kwargs={"n": 50, "seed": s, "seconds": 0.3 * (s % 2)})
            for s in range(6)]  # odd seeds are slower: they finish out of order
    with make_executor("local", workers=2) as executor:
        results = executor.map(jobs, JobStore(tmp_path, results="sums"), progress=False)
    assert [r.key for r in results] == [j.key for j in jobs]
    assert [r.value["seed"] for r in results] == list(range(6))
    assert all(r.ok and r.attempts == 1 for r in results)
    log = (tmp_path / "job_logs" / "sums" / "job_03.log").read_text()
    assert "== attempt 1 · local · local-" in log and "summing 50 numbers with seed 3" in log
    mtimes = {p.name: p.stat().st_mtime_ns for p in (tmp_path / "sums").iterdir()}
    again = make_executor("serial").map(jobs, JobStore(tmp_path, results="sums"), progress=False)
    assert [r.value for r in again] == [r.value for r in results]
    assert all(r.resumed for r in again)
    assert {p.name: p.stat().st_mtime_ns for p in (tmp_path / "sums").iterdir()} == mtimes


def test_serial_and_local_write_the_same_bytes_for_any_worker_count(tmp_path):
    contents = []
    for name, workers in (("serial", 1), ("local", 1), ("local", 2)):
        root = tmp_path / f"{name}{workers}"
        with make_executor(name, workers=workers) as executor:
            executor.map(_sums(), JobStore(root, results="sums"), progress=False)
        contents.append({p.name: p.read_bytes() for p in sorted((root / "sums").iterdir())})
    assert contents[0] == contents[1] == contents[2]
    assert len(contents[0]) == 6


def test_a_result_found_truncated_is_set_aside_and_its_job_run_again(tmp_path):
    store = JobStore(tmp_path, results="sums")
    first = make_executor("serial").map(_sums(2), store, progress=False)
    path = tmp_path / "sums" / "job_01.json"
    path.write_bytes(path.read_bytes()[:20])  # a disk that lost the end of the file
    with pytest.warns(UserWarning, match="truncated"):
        again = make_executor("serial").map(_sums(2), store, progress=False)
    assert [r.resumed for r in again] == [True, False]
    assert [r.value for r in again] == [r.value for r in first]
    assert (tmp_path / "sums" / "job_01.json.corrupt").exists()


def test_a_crashing_job_is_retried_then_recorded_as_failed_and_the_run_goes_on(tmp_path):
    jobs = [*_sums(2),
            Job("crash_once", crash_once, kwargs={"marker": str(tmp_path / "m"), "seed": 7}),
            Job("segfault", crash, kwargs={"how": "segfault"}),
            Job("raises", seeded_sum, kwargs={"n": "many", "seed": 0}),
            *_sums(4)[2:]]
    store = JobStore(tmp_path, results="r", on_failure=lambda job, why: {"verdict": "failed"})
    with make_executor("local", workers=2, retries=2) as executor:
        results = {r.key: r for r in executor.map(jobs, store, progress=False)}
    assert results["crash_once"].ok and results["crash_once"].attempts == 2
    bad = results["segfault"]
    assert not bad.ok and bad.attempts == 3 and "crashed its worker" in bad.reason
    assert bad.value["verdict"] == "failed" and bad.value["job_failed"] is True
    log = (tmp_path / "job_logs" / "r" / "segfault.log").read_text()
    assert log.count("== attempt") == 3 and "SIGSEGV" in log
    raised = results["raises"]  # an exception is a verdict at once: no retry
    assert not raised.ok and raised.attempts == 1 and raised.reason.startswith("TypeError")
    assert all(results[f"job_{s:02d}"].ok for s in range(4))
    # a resumed run keeps the verdict and does not run the crashing job again
    resumed = {r.key: r for r in make_executor("serial").map(jobs, store, progress=False)}
    assert not resumed["segfault"].ok and resumed["segfault"].resumed
    assert resumed["segfault"].reason == bad.reason


def test_a_worker_killed_mid_job_is_replaced_and_the_job_rerun(tmp_path):
    pid_file, release = tmp_path / "pid", tmp_path / "release"
    jobs = [_sums(1)[0], Job("victim", wait_for_file, kwargs={
        "pid_file": str(pid_file), "release": str(release), "seed": 3}), _sums(3)[2]]

    def kill_then_release() -> None:
        deadline = time.monotonic() + 60
        while not pid_file.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        first = int(pid_file.read_text())
        os.kill(first, signal.SIGKILL)
        while time.monotonic() < deadline:  # the retry in a new worker writes its pid
            if pid_file.exists() and pid_file.read_text() not in ("", str(first)):
                break
            time.sleep(0.05)
        release.write_text("go")

    killer = threading.Thread(target=kill_then_release, daemon=True)
    killer.start()
    with make_executor("local", workers=2) as executor:
        results = executor.map(jobs, JobStore(tmp_path, results="r"), progress=False)
    killer.join(timeout=5)
    victim = results[1]
    assert victim.ok and victim.attempts == 2 and victim.value["seed"] == 3
    log = (tmp_path / "job_logs" / "r" / "victim.log").read_text()
    assert "SIGKILL" in log and log.count("== attempt") == 2
    assert [r.ok for r in results] == [True, True, True]


def test_a_killed_driver_takes_its_workers_and_resumes_losing_and_repeating_nothing(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", DRIVER, str(tmp_path), "local", "0.4", "12"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    results = tmp_path / "sums"
    while time.monotonic() < deadline and len(list(results.glob("*.json"))) < 3:
        time.sleep(0.05)
    workers = psutil.Process(proc.pid).children()
    proc.kill()
    proc.wait(timeout=10)
    done_before = {p.name: p.stat().st_mtime_ns for p in results.glob("*.json")}
    assert 3 <= len(done_before) < 12, "the driver was killed mid-run"
    _gone, alive = psutil.wait_procs(workers, timeout=10)
    assert not alive, "workers outlive a killed driver"
    jobs = [Job(f"job_{s:02d}", slow_sum, kwargs={"n": 50, "seed": s, "seconds": 0.4})
            for s in range(12)]
    with make_executor("local", workers=2) as executor:
        resumed = executor.map(jobs, JobStore(tmp_path, results="sums"), progress=False)
    assert sum(r.resumed for r in resumed) == len(done_before)
    assert {p.name: p.stat().st_mtime_ns for p in results.glob("*.json")
            if p.name in done_before} == done_before
    assert attempts_logged(tmp_path, "sums") == {f"job_{s:02d}": 1 for s in range(12)}
    assert [r.value for r in resumed] == [seeded_sum(50, s) for s in range(12)]


def test_a_job_over_its_time_limit_is_killed_and_recorded(tmp_path):
    jobs = [Job("slow", slow_sum, kwargs={"n": 5, "seed": 0, "seconds": 30.0}), _sums(1)[0]]
    with make_executor("local", workers=1, retries=0, job_timeout_s=1.0) as executor:
        start = time.monotonic()
        results = executor.map(jobs, JobStore(tmp_path), progress=False)
    assert time.monotonic() - start < 20
    assert not results[0].ok and "timed out" in results[0].reason
    assert results[1].ok


def test_workers_import_only_what_their_jobs_need(tmp_path):
    modules = ["simjudge.pipelines.components", "simjudge.skills.executor", "simjudge.judges.live"]
    with make_executor("local", workers=1) as executor:
        bare, pipeline = executor.map([Job("bare", imports, ([],)),
                                       Job("pipeline", imports, (modules,))], progress=False)
    assert bare.value["pid"] == pipeline.value["pid"], "one persistent worker"
    assert bare.value["torch"] is False and pipeline.value["torch"] is False
    assert bare.value["rss_mib"] < 100  # a torch worker: 266 MiB (bench/executors.py)


def test_unpicklable_jobs_and_bad_settings_get_clear_errors():
    with make_executor("local", workers=1) as executor, pytest.raises(ExecutorError,
                                                                      match="closure"):
        executor.map([Job("closure", lambda: 1)], progress=False)
    assert make_executor("serial").map([Job("closure", lambda: 1)], progress=False)[0].value == 1
    with pytest.raises(ExecutorError, match="needs --executor ray"):
        make_executor("local", ray_address="auto")
    with pytest.raises(ExecutorError, match="unknown executor"):
        make_executor("dask")
    with pytest.raises(ExecutorError, match="safe file name"):
        Job("../escape", seeded_sum)
    with pytest.raises(ExecutorError, match="unique"):
        make_executor("serial").map([_sums(1)[0], _sums(1)[0]], progress=False)
    assert resume_identity({"seed": 0, "executor": "ray", "workers": 2, "resume": True}) == [
        "seed"]


def _dataset(out: Path, executor_name: str, workers: int) -> None:
    request = TaskRequest.resolve("Open Drawer")
    proposer = make_proposer("template", out)
    with make_executor(executor_name, workers=workers) as executor:
        build_dataset([request], proposer, proposer,
                      make_execute_fn("oracle", seed=0, video=False,
                                      goals={request.name: request.goal}),
                      out, base=1, completions=1, seed=0, progress=False,
                      config={"executor": executor_name, "workers": workers},
                      executor=executor)


def _differences(a, b, path=""):
    """Where two nested values differ, as ``{path: (a, b)}`` (for a readable failure)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = {}
        for key in sorted(set(a) | set(b), key=str):
            out.update(_differences(a.get(key), b.get(key), f"{path}/{key}"))
        return out
    return {} if a == b else {path: (a, b)}


def test_dataset_build_is_the_same_byte_for_byte_serial_or_local(tmp_path):
    contents = {}
    for name, workers in (("serial", 1), ("local", 2)):
        work = tmp_path / "run"  # the same path for both (outcomes record their folder)
        _dataset(work, name, workers)
        contents[name] = run_contents(work)
        shutil.move(work, tmp_path / name)
    assert contents["serial"] == contents["local"], _differences(contents["serial"],
                                                                contents["local"])
    assert any(k.startswith("outcomes/") for k in contents["serial"])
    # the local run resumes under the serial executor (the executor is not part of identity)
    shutil.move(tmp_path / "local", tmp_path / "run")
    _dataset(tmp_path / "run", "serial", 1)
    assert run_contents(tmp_path / "run") == contents["serial"]


def test_acquire_records_a_crashed_candidate_as_failed_and_pools_the_rest(tmp_path):
    from simjudge.pipelines.components import SolutionExecute

    request = TaskRequest.resolve("Open Drawer")
    execute = CrashOnCandidate(SolutionExecute("oracle", None, 0, False,
                                               {request.name: request.goal}), "cand_001")
    with make_executor("local", workers=2, retries=1) as executor:
        result = acquire(request, make_proposer("template", tmp_path), execute, tmp_path / "run",
                         candidates=3, execute_all=True, seed=0, progress=False,
                         executor=executor)
    crashed = result.executed["cand_001"]
    assert crashed.verdict == "failed" and not crashed.task_success
    assert "crashed its worker" in crashed.reason
    assert result.executed["cand_000"].task_success and result.task_success
    summary = (tmp_path / "run" / "summary.md").read_text()
    assert "cand_001 (failed): execution failed: the job crashed its worker" in summary


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_judge_bench_is_the_same_serial_or_local(tmp_path):
    from simjudge.pipelines.judge_bench import JudgeBenchConfig, run_judge_bench

    contents = {}
    for name in ("serial", "local"):
        work = tmp_path / "run"
        run_judge_bench(JudgeBenchConfig(
            tasks=("PressButton-v0", "OpenDrawer-v0"), pairs=30, neutral=0, ks=(1,),
            sections=("pairs", "scores"), out=str(work), executor=name, workers=2))
        contents[name] = {k: v for k, v in run_contents(work).items()
                          if k != "judge_bench.md"}  # the report prints timings
        contents[name]["judge_bench.json"].pop("config")  # it names the executor
        shutil.move(work, tmp_path / name)
    assert contents["serial"] == contents["local"]
    assert contents["serial"]["judge_bench.json"]["rollouts"]["failed"] == {}
    assert len([k for k in contents["serial"] if k.startswith("rollouts/")]) == 2
