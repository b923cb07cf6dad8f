"""The driver's physics backend reaches every job, wherever it runs (issue 40): a pool
worker started before the backend was chosen (or a Ray node with its own environment) runs
the job on the driver's backend, and its own environment is left as it was."""

from __future__ import annotations

import os

import pytest

from simjudge.executors import Job, make_executor
from tests.tasks.shared_job_helpers import backend_seen


@pytest.mark.parametrize("name", ["serial", "local"])
def test_jobs_run_on_the_drivers_backend(name, monkeypatch):
    monkeypatch.delenv("SIMJUDGE_BACKEND", raising=False)
    with make_executor(name, 1) as executor:
        [first] = executor.map([Job("a", backend_seen)], progress=False)
        assert first.value["backend"] == ""
        monkeypatch.setenv("SIMJUDGE_BACKEND", "mujoco")
        [second] = executor.map([Job("b", backend_seen)], progress=False)
        monkeypatch.delenv("SIMJUDGE_BACKEND")
        [third] = executor.map([Job("c", backend_seen)], progress=False)
    if name == "local":
        assert first.value["pid"] == second.value["pid"] != os.getpid()  # the same worker
    assert second.value["backend"] == "mujoco"
    assert third.value["backend"] == ""  # the worker's own environment is restored
