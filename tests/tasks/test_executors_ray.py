"""The Ray executor on a private local Ray instance (127.0.0.1, no dashboard, 1-2 CPUs).

One small test runs by default (Ray's start-up dominates it); the pipeline comparison and
the kill tests are marked slow. Every test is bounded by a time-out.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil
import pytest

from simjudge.executors import Job, JobStore, make_executor
from simjudge.executors.probe import (
    WarmProbe,
    crash_once,
    seeded_sum,
    slow_sum,
    wait_for_file,
)
from tests.tasks.executor_helpers import DRIVER, attempts_logged, run_contents

pytest.importorskip("ray", reason="the ray executor needs `pip install 'ray>=2'` (dev extra)")


def _jobs(tmp_path) -> list[Job]:
    return [*[Job(f"job_{s:02d}", seeded_sum, kwargs={"n": 300, "seed": s}) for s in range(4)],
            Job("crash_once", crash_once, kwargs={"marker": str(tmp_path / "m"), "seed": 4})]


def _listening_ports(pids: set[int]) -> set[str]:
    return {c.laddr.ip.removeprefix("::ffff:") for c in psutil.net_connections("inet")
            if c.status == psutil.CONN_LISTEN and c.pid in pids}  # IPv4-mapped loopback too


def _name(process: psutil.Process) -> str:
    try:
        return process.name()
    except psutil.NoSuchProcess:
        return ""


@pytest.mark.timeout(120)
def test_ray_writes_what_serial_writes_retries_a_crash_and_listens_on_loopback(tmp_path):
    make_executor("serial").map(_jobs(tmp_path)[:4], JobStore(tmp_path / "local"),
                                progress=False)  # crash_once would take this process down
    with make_executor("ray", workers=2) as executor:
        results = executor.map(_jobs(tmp_path), JobStore(tmp_path / "ray"), progress=False)
        ray_pids = {p.pid for p in psutil.Process().children(recursive=True)}
        addresses = _listening_ports(ray_pids)
        executor.prepare(WarmProbe(), ["ftplib"])  # every actor (the replaced one too)
        probes = executor.map([Job(f"probe_{s}", WarmProbe(), kwargs={
            "module": "ftplib", "seed": s}) for s in range(4)], progress=False)
    assert all(r.value["warmed"] and r.value["loaded"] for r in probes), probes
    assert len({r.value["pid"] for r in probes}) <= 2, "one long-lived actor per worker"
    assert [r.key for r in results] == [j.key for j in _jobs(tmp_path)]
    assert results[-1].ok and results[-1].attempts == 2  # the segfault was retried
    local = sorted((tmp_path / "local" / "results").iterdir())
    assert [p.read_bytes() for p in local] == [
        (tmp_path / "ray" / "results" / p.name).read_bytes() for p in local]
    assert addresses and addresses <= {"127.0.0.1"}, addresses
    assert "ray pid" in (tmp_path / "ray" / "job_logs" / "results" / "job_00.log").read_text()


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_dataset_build_on_ray_is_the_same_byte_for_byte_as_serial(tmp_path):
    from tests.tasks.test_executors import _dataset

    contents = {}
    for name, workers in (("serial", 1), ("ray", 2)):
        work = tmp_path / "run"
        _dataset(work, name, workers)
        contents[name] = run_contents(work)
        shutil.move(work, tmp_path / name)
    assert contents["serial"] == contents["ray"]


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_ray_worker_killed_mid_job_is_retried(tmp_path):
    pid_file, release = tmp_path / "pid", tmp_path / "release"
    jobs = [Job("victim", wait_for_file, kwargs={"pid_file": str(pid_file),
                                                 "release": str(release), "seed": 3}),
            Job("other", seeded_sum, kwargs={"n": 10, "seed": 1})]

    def kill_then_release() -> None:
        deadline = time.monotonic() + 120
        while not pid_file.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        first = pid_file.read_text()
        os.kill(int(first), signal.SIGKILL)
        while time.monotonic() < deadline and pid_file.read_text() == first:
            time.sleep(0.05)
        release.write_text("go")

    killer = threading.Thread(target=kill_then_release, daemon=True)
    killer.start()
    with make_executor("ray", workers=2) as executor:
        results = executor.map(jobs, JobStore(tmp_path), progress=False)
    killer.join(timeout=5)
    assert results[0].ok and results[0].attempts == 2 and results[0].value["seed"] == 3
    assert attempts_logged(tmp_path, "results") == {"victim": 2, "other": 1}


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_killed_ray_driver_stops_its_ray_and_resumes_losing_and_repeating_nothing(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", DRIVER, str(tmp_path), "ray", "1.0", "10"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    results = tmp_path / "sums"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and len(list(results.glob("*.json"))) < 2:
        time.sleep(0.05)
    ray_processes = psutil.Process(proc.pid).children(recursive=True)
    proc.kill()
    proc.wait(timeout=10)
    done_before = {p.name: p.stat().st_mtime_ns for p in results.glob("*.json")}
    assert 2 <= len(done_before) < 10, "the driver was killed mid-run"
    agents = [p for p in ray_processes if "Agent" in _name(p)]  # they wait for the GCS
    core = [p for p in ray_processes if p not in agents]  # raylet, GCS, workers
    _gone, alive = psutil.wait_procs(core, timeout=60)
    assert not alive, f"Ray processes outlive their killed driver: {alive}"
    _gone, alive = psutil.wait_procs(agents, timeout=240)
    assert not alive, f"Ray's agents outlive their killed driver: {alive}"
    jobs = [Job(f"job_{s:02d}", slow_sum, kwargs={"n": 50, "seed": s, "seconds": 1.0})
            for s in range(10)]  # the driver's jobs
    with make_executor("ray", workers=2) as executor:
        resumed = executor.map(jobs, JobStore(tmp_path, results="sums"), progress=False)
    assert sum(r.resumed for r in resumed) == len(done_before)
    assert {p.name: p.stat().st_mtime_ns for p in results.glob("*.json")
            if p.name in done_before} == done_before
    assert attempts_logged(tmp_path, "sums") == {f"job_{s:02d}": 1 for s in range(10)}
    assert [r.value for r in resumed] == [seeded_sum(50, s) for s in range(10)]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.timeout(60)
def test_a_cluster_address_where_nothing_answers_fails_fast_with_the_fix():
    from simjudge.executors import ExecutorError

    executor = make_executor("ray", ray_address=f"127.0.0.1:{_free_port()}")
    with pytest.raises(ExecutorError, match="nothing answers at 127.0.0.1:.*ray start --head"):
        executor.start()


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_an_existing_cluster_is_joined_by_address_and_left_running(tmp_path):
    port = _free_port()
    env = dict(os.environ, RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0")
    head = subprocess.Popen(
        [str(Path(sys.executable).with_name("ray")), "start", "--head", "--block",
         f"--port={port}", "--node-ip-address=127.0.0.1", "--num-cpus=2",
         "--include-dashboard=false", "--disable-usage-stats",
         f"--temp-dir={tempfile.mkdtemp(prefix='ray', dir='/tmp')}"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.5)
        out = tmp_path / "data"
        build = subprocess.run(  # the command line, as a user would point it at a cluster
            [str(Path(sys.executable).with_name("simjudge")), "dataset", "build",
             "--tasks", "Open Drawer", "--base", "1", "--completions", "1",
             "--reward-solver", "oracle", "--executor", "ray",
             "--ray-address", f"127.0.0.1:{port}", "--out", str(out)],
            env=dict(env, RAY_AUTH_MODE="token"),  # `ray start` enables token auth
            capture_output=True, text=True, timeout=400)
        assert build.returncode == 0, build.stderr[-3000:]
        logs = sorted((out / "job_logs" / "outcomes").glob("*.log"))
        assert logs and all("· ray · ray pid" in p.read_text() for p in logs)
        assert head.poll() is None, "leaving the cluster must not stop it"
    finally:
        cluster = psutil.Process(head.pid).children(recursive=True)
        head.terminate()
        head.wait(timeout=60)
        _gone, alive = psutil.wait_procs(cluster, timeout=60)
        for process in alive:
            process.kill()
