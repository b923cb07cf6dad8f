"""Skill library on disk: save from runs, list, replay exactly (primitive and SAC), CLI."""

from __future__ import annotations

import json

import pytest

from simjudge.cli import main
from simjudge.envs.sim_state import SimState
from simjudge.skills.executor import execute_solution
from simjudge.skills.library import SkillLibrary, default_skills_root, state_distance
from simjudge.skills.sac import SACConfig
from simjudge.tasks.spec import load_solution

TRIVIAL = "def _compute_reward(self):\n    return 0.0, True\n"
TINY = SACConfig(
    net_arch=(16, 16),
    batch_size=32,
    buffer_size=1_000,
    learning_starts=10,
    eval_freq=50,
    n_eval_episodes=2,
    progress_bar=False,
)


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    """A library filled by one run: a planned grasp and a (trivially) learned SAC skill."""
    root = tmp_path_factory.mktemp("skills")
    solution = load_solution("OpenDrawer-v0")
    subtasks = list(solution.model_dump()["subtasks"])
    subtasks[1]["code"] = TRIVIAL
    solution = solution.model_validate({**solution.model_dump(), "subtasks": subtasks})
    summary = execute_solution(
        solution,
        root / "run",
        budget_steps=500,
        sac_config=TINY,
        skills=SkillLibrary(root / "lib"),
        video=False,
    )
    assert summary.subtask_success == (True, True)
    return SkillLibrary(root / "lib")


def test_runs_add_skills_with_their_files(library):
    records = library.list()
    assert [r.kind for r in records] == ["primitive", "reward"]
    grasp, learned = records
    assert grasp.task == "OpenDrawer-v0" and grasp.subtask["name"] == "grasp the drawer handle"
    assert grasp.metrics["success"] and grasp.metrics["solver"] == "motion-planning"
    assert learned.metrics["net_arch"] == [16, 16] and learned.metrics["best_success_rate"] == 1.0
    for record, files in ((grasp, {"trajectory.json"}), (learned, {"policy.zip", "policy.json"})):
        names = {p.name for p in (library.root / record.id).iterdir()}
        assert files | {"skill.json", "start_state.json", "end_state.json"} <= names
    assert library.get(grasp.id) == grasp


def test_replay_primitive_skill_exactly_with_video(library, tmp_path):
    grasp = library.list()[0]
    result = library.replay(grasp.id, video=tmp_path / "grasp.mp4")
    assert result.state_error == 0.0 and result.steps == grasp.metrics["steps"]
    assert result.success is None and (tmp_path / "grasp.mp4").stat().st_size > 1000


def test_replay_sac_skill_exactly(library):
    learned = library.list()[1]
    result = library.replay(learned.id)
    assert result.success and result.state_error == 0.0 and result.steps == 1


def test_unknown_skill_lists_the_ids(library):
    with pytest.raises(LookupError, match="skills there are"):
        library.get("nope")


def test_default_root_honours_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("SIMJUDGE_SKILLS_DIR", str(tmp_path))
    assert default_skills_root() == tmp_path and SkillLibrary().root == tmp_path
    monkeypatch.delenv("SIMJUDGE_SKILLS_DIR")
    assert default_skills_root().parts[-3:] == (".cache", "simjudge", "skills")


def test_state_distance_is_zero_only_for_equal_states(library):
    folder = library.root / library.list()[0].id
    start = SimState.from_dict(json.loads((folder / "start_state.json").read_text()))
    end = SimState.from_dict(json.loads((folder / "end_state.json").read_text()))
    assert state_distance(start, start) == 0.0 and state_distance(start, end) > 0.01


def test_cli_skills_list_and_replay(library, tmp_path, capsys):
    assert main(["skills", "list", "--root", str(library.root)]) == 0
    assert "2 skills in" in capsys.readouterr().out
    assert main(["skills", "list", "--root", str(library.root), "--json"]) == 0
    ids = [row["id"] for row in json.loads(capsys.readouterr().out)]
    video = tmp_path / "replay.mp4"
    assert (
        main(["skills", "replay", ids[1], "--root", str(library.root), "--video", str(video)]) == 0
    )
    assert "0.00e+00" in capsys.readouterr().out and video.exists()
    assert main(["skills", "replay", "nope", "--root", str(library.root)]) == 2
