"""Bounded input files (issue 39, part 4): size, nesting and YAML alias expansion are capped.

An alias bomb ("billion laughs": nine lists of nine aliases of the previous list) is tiny
on disk and expands to 9**9 nodes; it used to hang ``simjudge execute`` with memory
climbing. Every loader of solutions, tasks, configs, RoboGen folders, task proposals and
JSON run files now refuses it (and the other caps) fast, naming the cap.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from simjudge.tasks.spec import Solution, load_solution
from simjudge.tasks.spec.bounded import (
    MAX_ALIASES,
    MAX_DEPTH,
    MAX_YAML_BYTES,
    InputLimitError,
    load_yaml,
    read_yaml,
)
from simjudge.tasks.spec.io import read_json

ROOT = Path(__file__).resolve().parents[2]
EXEMPLAR = ROOT / "tasks" / "exemplars" / "OpenDrawer-v0.yaml"


def _bomb(levels: int = 9) -> str:
    text = "lol: &l0 [" + ", ".join(["'lol'"] * 9) + "]\n"
    for i in range(1, levels):
        text += f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]\n"
    return text


def _bomb_solution() -> str:
    """A real solution file with an alias bomb in its provenance."""
    return EXEMPLAR.read_text() + "  bomb:\n" + "".join(
        f"    {line}\n" for line in _bomb().splitlines())


def test_an_alias_bomb_in_a_solution_fails_fast_naming_the_cap(tmp_path: Path) -> None:
    path = tmp_path / "bomb.yaml"
    path.write_text(_bomb_solution())
    start = time.perf_counter()
    with pytest.raises(InputLimitError, match="MAX_YAML_NODES") as info:
        load_solution(path)
    assert time.perf_counter() - start < 2.0
    assert str(path) in str(info.value) and "alias" in str(info.value)
    with pytest.raises(InputLimitError, match="MAX_YAML_NODES"):
        Solution.from_yaml(_bomb_solution())  # YAML text, not a file


def test_execute_refuses_an_alias_bomb_at_once(tmp_path: Path) -> None:
    path = tmp_path / "bomb.yaml"
    path.write_text(_bomb_solution())
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "simjudge", "execute", str(path), "--out",
                           str(tmp_path / "run")], capture_output=True, text=True, timeout=120,
                          cwd=ROOT, check=False)
    assert done.returncode != 0
    assert "MAX_YAML_NODES" in done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert time.monotonic() - start < 60.0


def test_ordinary_files_with_aliases_still_load() -> None:
    assert load_yaml("x: &v [1, 2]\ny: *v\n") == {"x": [1, 2], "y": [1, 2]}
    assert load_solution(EXEMPLAR).task == "Open Drawer"
    assert load_yaml("") is None


@pytest.mark.parametrize(
    ("text", "cap"),
    [
        ("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), "MAX_DEPTH"),
        ("a:\n" + "".join("  " * i + f"k{i}:\n" for i in range(1, MAX_DEPTH + 2)) + "    x: 1\n",
         "MAX_DEPTH"),
        ("x: &a [1]\n" + "".join(f"y{i}: *a\n" for i in range(MAX_ALIASES + 1)), "MAX_ALIASES"),
        ("&a [*a]", "MAX_YAML_NODES"),
        ("[" * 100_000 + "]" * 100_000, "MAX_DEPTH"),
    ],
)
def test_yaml_caps(text: str, cap: str) -> None:
    start = time.perf_counter()
    with pytest.raises(InputLimitError, match=cap):
        load_yaml(text, "input.yaml")
    assert time.perf_counter() - start < 2.0


def test_a_yaml_file_over_the_size_cap_is_refused_before_reading(tmp_path: Path) -> None:
    path = tmp_path / "huge.yaml"
    with path.open("w") as fh:
        fh.write("x: '")
        fh.write("a" * (MAX_YAML_BYTES + 10))
        fh.write("'\n")
    with pytest.raises(InputLimitError, match="MAX_YAML_BYTES"):
        read_yaml(path)
    with pytest.raises(InputLimitError, match="MAX_YAML_BYTES"):
        load_solution(path)


def test_task_and_config_files_are_bounded(tmp_path: Path) -> None:
    from simjudge.tasks.spec.config import read_config_file
    from simjudge.tasks.spec.task import TaskSpec

    path = tmp_path / "task.yaml"
    path.write_text(_bomb())
    with pytest.raises(InputLimitError, match="MAX_YAML_NODES"):
        TaskSpec.from_yaml(path)
    with pytest.raises(InputLimitError, match="MAX_YAML_NODES"):
        read_config_file(path, dict)


def test_a_config_path_check_names_the_cap(tmp_path: Path) -> None:
    from simjudge.tasks.spec.config import ConfigError
    from simjudge.tasks.spec.config_checks import check_input_file

    path = tmp_path / "bomb.yaml"
    path.write_text(_bomb())
    with pytest.raises(ConfigError, match="MAX_YAML_NODES"):
        check_input_file(str(path), "--solution")


def test_a_robogen_folder_with_an_alias_bomb_is_refused(tmp_path: Path) -> None:
    from simjudge.pipelines.robogen import import_robogen
    from simjudge.pipelines.robogen.reader import RobogenImportError

    source = ROOT / "tests" / "fixtures" / "robogen" / "Start_Dishwasher"
    folder = tmp_path / "Start_Dishwasher"
    shutil.copytree(source, folder)
    config = next(folder.glob("*.yaml"))
    config.write_text(config.read_text() + "- bomb:\n" + "".join(
        f"    {line}\n" for line in _bomb().splitlines()))
    start = time.perf_counter()
    with pytest.raises((RobogenImportError, InputLimitError), match="MAX_YAML_NODES"):
        import_robogen(folder)
    assert time.perf_counter() - start < 5.0


def test_task_proposal_files_are_bounded(tmp_path: Path) -> None:
    from simjudge.pipelines.task_proposals import load_task_proposals

    path = tmp_path / "tasks.yaml"
    path.write_text(_bomb())
    with pytest.raises(InputLimitError, match="MAX_YAML_NODES"):
        load_task_proposals(path)
    deep = tmp_path / "tasks.json"
    deep.write_text("[" * 200 + "]" * 200)
    with pytest.raises(InputLimitError, match="MAX_DEPTH"):
        load_task_proposals(deep)


def test_json_files_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from simjudge.tasks.spec import io

    deep = tmp_path / "deep.json"
    deep.write_text("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1))
    with pytest.raises(InputLimitError, match="MAX_DEPTH"):
        read_json(deep)
    very_deep = tmp_path / "very_deep.json"
    very_deep.write_text("[" * 200_000 + "]" * 200_000)
    with pytest.raises(InputLimitError, match="MAX_DEPTH"):
        read_json(very_deep)
    normal = tmp_path / "ok.json"
    normal.write_text(json.dumps({"a": [1, {"b": 2}]}))
    assert read_json(normal) == {"a": [1, {"b": 2}]}
    monkeypatch.setattr(io, "MAX_JSON_BYTES", 10)  # the cap is read when the file is
    with pytest.raises(InputLimitError, match="MAX_JSON_BYTES"):
        read_json(normal)


def test_scene_files_and_goal_files_are_read_with_the_same_caps(tmp_path: Path) -> None:
    from simjudge.envs.scene import SceneConfig
    from simjudge.pipelines.goal_card import load_written_goal

    start = time.monotonic()
    with pytest.raises(InputLimitError, match="MAX_YAML_NODES"):
        SceneConfig.from_yaml(_bomb())
    path = tmp_path / "scene.yaml"
    path.write_text(_bomb())
    with pytest.raises(InputLimitError, match="MAX_YAML_NODES"):
        SceneConfig.from_yaml(path)
    goal = tmp_path / "goal.yaml"
    goal.write_text(_bomb())
    with pytest.raises((InputLimitError, ValueError), match="MAX_YAML_NODES"):
        load_written_goal(str(goal), "OpenDrawer-v0")
    assert time.monotonic() - start < 5.0
