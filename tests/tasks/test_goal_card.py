"""The goal card: printed before a run, recorded in summary.json, a written goal wins."""

from __future__ import annotations

import json

from simjudge.cli import main

ACQUIRE = ["acquire", "--proposer", "template", "--no-pool", "--candidates", "1",
           "--reward-solver", "mpc"]


def _acquire(capsys, tmp_path, *extra: str) -> tuple[str, dict]:
    out = tmp_path / "run"
    code = main([*ACQUIRE, "--out", str(out), *extra])
    printed = capsys.readouterr().out
    assert code == 0
    return printed, json.loads((out / "summary.json").read_text())


def test_acquire_prints_and_records_the_card_and_keeps_the_outcome_keys(capsys, tmp_path):
    printed, summary = _acquire(capsys, tmp_path, "--task", "Close Door", "--description",
                                "The door starts open; close it.", "--object", "Door-2")
    card = summary["goal"]
    assert card["status"] == "derived" and card["starts"] and "plan_shares_reading" in card
    assert card["parts"][0]["default"].startswith("plain 'close'")
    assert printed.index("goal (read from the task's words)") < printed.index("# acquire")
    row = summary["candidates"][0]
    for key in ("claimed_success", "verified_success", "initial_joints", "final_joints",
                "max_joints"):
        assert key in row
    assert row["initial_joints"]["Door/joint_0"]["fraction"] > 0.05  # stated start: open


def test_an_abstention_is_unverifiable_and_says_what_to_write(capsys, tmp_path):
    printed, summary = _acquire(capsys, tmp_path, "--task", "Fix Door", "--description",
                                "Fix the door.", "--object", "Door-2")
    card = summary["goal"]
    assert card["status"] == "refused" and card["verdict"] == "unverifiable"
    assert any("'fix'" in m for m in card["to_make_verifiable"])
    assert any("--goal" in m for m in card["to_make_verifiable"])
    assert "to make it verifiable" in printed
    assert summary["candidates"][0]["verdict"] in ("unverifiable", "")
    assert summary["task_success"] is False


def test_a_written_goal_wins_over_the_words(capsys, tmp_path):
    goal = {"targets": [{"kind": "joint", "object": "Door", "joint": "joint_0",
                         "part": "link_0", "link": "link_1", "low": 0.0, "high": 0.1,
                         "direction": "close", "start": 1.0}]}
    printed, summary = _acquire(capsys, tmp_path, "--task", "Open Door", "--description",
                                "Open the door.", "--object", "Door-2", "--goal",
                                json.dumps(goal))
    card = summary["goal"]
    assert card["status"] == "written" and card["goal"]["targets"][0]["direction"] == "close"
    assert "written (--goal)" in printed and "plan_shares_reading" not in card


def test_a_bad_written_goal_is_a_clear_error(capsys, tmp_path):
    code = main([*ACQUIRE, "--out", str(tmp_path / "r"), "--task", "Open Door", "--object",
                 "Door-2", "--goal", '{"targets": []}'])
    assert code == 2 and "--goal" in capsys.readouterr().err


def test_execute_records_the_card_of_a_built_in_task(capsys, tmp_path):
    out = tmp_path / "exec"
    main(["execute", "OpenDrawer-v0", "--reward-solver", "mpc", "--no-video", "--out", str(out)])
    printed = capsys.readouterr().out
    assert "goal (the built-in task's reference goal)" in printed
    assert json.loads((out / "summary.json").read_text())["goal"]["status"] == "reference"


def _drawer_goal(direction: str) -> dict:
    low, high = (0.0, 0.1) if direction == "close" else (0.6, 1.0)
    return {"targets": [{"kind": "joint", "object": "StorageFurniture", "joint": "joint_0",
                         "part": "link_0", "link": "link_1", "low": low, "high": high,
                         "direction": direction}]}


def test_a_goal_written_in_the_solution_file_is_what_execute_verifies(capsys, tmp_path):
    import yaml

    from simjudge.tasks.spec import LIBRARY_DIR, Solution

    data = yaml.safe_load((LIBRARY_DIR / "solutions" / "OpenDrawer-v0.yaml").read_text())
    data["goal"] = _drawer_goal("close")  # the file asks for the opposite of what it does
    solution = tmp_path / "sol.yaml"
    solution.write_text(Solution.parse(data).to_yaml())
    assert "goal:" in solution.read_text() and Solution.from_yaml(solution).goal is not None
    out = tmp_path / "exec"
    main(["execute", str(solution), "--reward-solver", "mpc", "--no-video", "--out", str(out)])
    printed = capsys.readouterr().out
    summary = json.loads((out / "summary.json").read_text())
    assert summary["goal"]["status"] == "written" and "written" in printed
    assert summary["goal"]["goal"]["targets"][0]["direction"] == "close"
    assert summary["verified_success"] is False  # it opened the drawer; the file's goal: closed
    # --goal on the command line wins over the file's goal
    out2 = tmp_path / "exec2"
    main(["execute", str(solution), "--reward-solver", "mpc", "--no-video", "--out", str(out2),
          "--goal", json.dumps(_drawer_goal("open"))])
    capsys.readouterr()
    summary2 = json.loads((out2 / "summary.json").read_text())
    assert summary2["goal"]["goal"]["targets"][0]["direction"] == "open"
    assert summary2["verified_success"] is True


def test_a_solution_without_a_goal_writes_no_goal_key():
    from simjudge.tasks.spec import LIBRARY_DIR, Solution

    solution = Solution.from_yaml(LIBRARY_DIR / "solutions" / "OpenDrawer-v0.yaml")
    assert solution.goal is None and "goal:" not in solution.to_yaml()
