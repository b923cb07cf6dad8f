"""Runs whose video is a by-product skip it, with the reason, where the backend cannot render.

SAPIEN's physics runs without a GPU but its renderer needs Vulkan: ``simjudge demo``,
``simjudge execute`` and ``simjudge audit`` on ``--backend sapien`` must still roll out and
judge (they failed on the video before), write no video and say why.
"""

from __future__ import annotations

import json

import pytest

from simjudge.cli import main
from simjudge.envs.backends import available_backends, render_problem

pytestmark = pytest.mark.skipif(
    "sapien" not in available_backends() or render_problem("sapien") is None,
    reason="needs SAPIEN installed on a machine where it cannot render (no Vulkan device)",
)


@pytest.fixture(autouse=True)
def _restore_backend(monkeypatch):
    """``--backend`` sets ``$SIMJUDGE_BACKEND`` for the process: undo it after each test."""
    monkeypatch.setenv("SIMJUDGE_BACKEND", "sapien")


def test_render_problem_names_the_backend_and_what_renders_here():
    assert render_problem("pybullet") is None and render_problem("mujoco") is None
    problem = render_problem("sapien")
    assert problem is not None and "Vulkan" in problem and "backend='mujoco'" in problem


def test_demo_runs_without_its_video(tmp_path, capsys):
    out = tmp_path / "demo"
    out.mkdir()
    (out / "rollout.mp4").write_bytes(b"an older run's video")
    assert main(["--backend", "sapien", "demo", "--task", "PutBreadInBowl-v0", "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["summary"]["success"] and summary["video"] is None
    assert "Vulkan" in summary["video_skipped"]
    assert (out / "progress.png").exists() and not (out / "rollout.mp4").exists()
    printed = capsys.readouterr().out
    assert "video skipped: SAPIEN cannot render" in printed and "rollout.mp4" not in printed


def test_execute_verifies_without_its_video(tmp_path, capsys):
    out = tmp_path / "run"
    code = main(["--backend", "sapien", "execute", "OpenDrawer-v0", "--out", str(out),
                 "--reward-solver", "oracle"])
    assert code == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["verified_success"] and "video" not in summary
    assert "Vulkan" in summary["video_skipped"] and not (out / "solution.mp4").exists()
    assert "video skipped: SAPIEN cannot render" in capsys.readouterr().out


def test_audit_runs_every_episode_without_videos(tmp_path, capsys):
    out = tmp_path / "audit"
    code = main(["--backend", "sapien", "audit", "--policy", "oracle=oracle", "--tasks", "OpenDrawer-v0",
                 "--seeds", "2", "--out", str(out), "--executor", "serial", "--no-report"])
    assert code == 0
    audit = json.loads((out / "audit.json").read_text())
    assert audit["episodes"] == 2 and audit["failed_jobs"] == []  # seed 0 failed on its video before
    assert not (out / "videos").exists()
    assert "videos skipped: SAPIEN cannot render" in capsys.readouterr().out
