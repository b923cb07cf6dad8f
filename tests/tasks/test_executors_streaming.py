"""Jobs fed lazily (an iterator read as workers free up) and workers warmed before jobs."""

from __future__ import annotations

from pathlib import Path

import pytest

from simjudge.executors import ExecutorError, Job, JobStore, make_executor
from simjudge.executors.probe import WarmProbe, seeded_sum, slow_sum

MODULE = "ftplib"  # a standard-library module nothing here imports


def _jobs(n: int) -> list[Job]:
    return [Job(f"job_{s:02d}", slow_sum, kwargs={"n": 50, "seed": s, "seconds": 0.2})
            for s in range(n)]


def _fed(jobs: list[Job], results: Path, seen: list[int]):
    """Yield the jobs, noting how many results were on disk when each one was made."""
    for job in jobs:
        seen.append(len(list(results.glob("*.json"))))
        yield job


def test_an_iterator_of_jobs_is_read_as_workers_free_up_with_the_same_results(tmp_path):
    jobs, seen = _jobs(6), []
    with make_executor("local", workers=2) as executor:
        results = executor.map(_fed(jobs, tmp_path / "lazy" / "r", seen),
                               JobStore(tmp_path / "lazy", results="r"), progress=False)
    assert [r.key for r in results] == [j.key for j in jobs]
    assert seen[:2] == [0, 0] and seen[-1] >= 3, seen  # later jobs made after results came
    make_executor("serial").map(jobs, JobStore(tmp_path / "list", results="r"), progress=False)
    names = sorted(p.name for p in (tmp_path / "list" / "r").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "lazy" / "r").iterdir())
    assert all((tmp_path / "list" / "r" / n).read_bytes() ==
               (tmp_path / "lazy" / "r" / n).read_bytes() for n in names)
    again = make_executor("serial").map(  # resumed from an iterator: nothing reruns
        _fed(jobs, tmp_path / "lazy" / "r", []), JobStore(tmp_path / "lazy", results="r"),
        progress=False)
    assert all(r.resumed for r in again) and [r.value for r in again] == [
        r.value for r in results]


def test_a_repeated_key_from_an_iterator_is_a_clear_error(tmp_path):
    twice = (Job("same", seeded_sum, kwargs={"n": 5, "seed": s}) for s in range(2))
    with pytest.raises(ExecutorError, match="unique.*'same'"):
        make_executor("serial").map(twice, JobStore(tmp_path), progress=False)


def test_prepare_warms_every_local_worker_before_its_first_job(tmp_path):
    probes = [Job(f"probe_{s}", WarmProbe(), kwargs={"module": MODULE, "seed": s})
              for s in range(4)]
    with make_executor("local", workers=2) as cold:
        plain = cold.map(probes, progress=False)
    assert not any(r.value["warmed"] or r.value["loaded"] for r in plain)
    with make_executor("local", workers=2) as executor:
        executor.prepare(WarmProbe(), [MODULE])
        warm = executor.map(probes, JobStore(tmp_path), progress=False)
    assert all(r.value["warmed"] and r.value["loaded"] for r in warm), warm
    assert len({r.value["pid"] for r in warm}) <= 2
    assert "warming up" not in (tmp_path / "job_logs" / "results" / "probe_0.log").read_text()
