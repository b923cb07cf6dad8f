"""The spec layer's one atomic write, one run directory and one outcome type."""

from __future__ import annotations

import os
import stat

import pytest

from simjudge.tasks.spec import Outcome, RunDir, RunDirError, SubtaskVerdict, atomic_write
from simjudge.tasks.spec.io import atomic_open


def test_atomic_write_has_the_usual_mode_and_leaves_no_temporary(tmp_path):
    old = os.umask(0o022)
    try:
        atomic_write(tmp_path / "a" / "b.txt", "hello")
    finally:
        os.umask(old)
    path = tmp_path / "a" / "b.txt"
    assert path.read_text() == "hello"
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    assert [p.name for p in path.parent.iterdir()] == ["b.txt"]


def test_a_failed_write_keeps_the_old_file_whole(tmp_path):
    path = tmp_path / "x.json"
    atomic_write(path, "old")
    with pytest.raises(RuntimeError), atomic_open(path) as fh:
        fh.write(b"half")
        raise RuntimeError("killed mid-write")
    assert path.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["x.json"]


def test_run_dir_resume_rules(tmp_path):
    config = {"task": "Open Drawer", "seed": 0, "versions": {"numpy": "1"}}
    assert RunDir(tmp_path).prepare(config, resume=False) is False
    recorded = RunDir(tmp_path).config
    assert recorded["seed"] == 0 and "provenance" in recorded
    # same config (volatile keys may differ): resumes
    assert RunDir(tmp_path).prepare({**config, "versions": {}}, resume=True) is True
    with pytest.raises(RunDirError, match="different seed"):
        RunDir(tmp_path).prepare({**config, "seed": 1}, resume=True)
    with pytest.raises(RunDirError, match="--resume"):
        RunDir(tmp_path).prepare(config, resume=False)  # nothing the caller may clear
    (tmp_path / "outputs").mkdir()
    (tmp_path / "outputs" / "f").write_text("x")
    RunDir(tmp_path).prepare({**config, "seed": 2}, resume=False, clear=["outputs"])
    assert not (tmp_path / "outputs").exists() and RunDir(tmp_path).config["seed"] == 2
    # identity keys: only they must match
    RunDir(tmp_path).prepare({**config, "seed": 2, "task": "x"}, resume=True, identity=["seed"])


def test_outcome_round_trips_and_checks_its_flags():
    verdict = SubtaskVerdict(0, "grasp", "primitive", True, details={"calls": []})
    outcome = Outcome((True,), True, claimed_success=True, verified_success=True,
                      verdict="verified", verdicts=[verdict],
                      final_joints={"A/joint_0": {"value": 0.3, "fraction": 0.75}})
    again = Outcome.from_dict({**outcome.to_dict(), "extra": "ignored"})
    assert again == outcome and again.verdicts[0] == verdict
    with pytest.raises(TypeError, match="subtask_success\\[0\\] must be a bool"):
        Outcome((1,), True)


def test_config_json_records_the_backend_and_a_resume_on_another_one_is_refused(tmp_path,
                                                                                monkeypatch):
    from simjudge.tasks.spec import RunDir, RunDirError

    monkeypatch.delenv("SIMJUDGE_BACKEND", raising=False)
    RunDir(tmp_path).prepare({"task": "OpenDrawer-v0"}, resume=False)
    assert RunDir(tmp_path).config["backend"] == "pybullet"
    monkeypatch.setenv("SIMJUDGE_BACKEND", "mujoco")
    with pytest.raises(RunDirError, match="backend"):
        RunDir(tmp_path).prepare({"task": "OpenDrawer-v0"}, resume=True)
