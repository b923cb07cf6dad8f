"""Repair rounds: unverified candidates go back to the proposer with their verdicts."""

from __future__ import annotations

import json

from simjudge.pipelines.acquire import acquire
from simjudge.pipelines.components import make_execute_fn
from simjudge.pipelines.proposer import TaskRequest
from simjudge.tasks.spec import Solution, load_solution, make_task_env

GOAL_LINE = "success = fraction >= 0.6"


class ReadsFeedback:
    """Proposes a too-lax drawer solution until verification feedback says so.

    The loop, the executor and the verification are the real ones; this proposer only
    stands in for a model that takes feedback into account.
    """

    name = "reads-feedback"

    def __init__(self) -> None:
        self.feedback: list[str] = []

    def propose(self, task, exemplars=(), n=1, seed=0, feedback=""):
        self.feedback.append(feedback)
        lax = "claimed but not verified" not in feedback
        data = load_solution("OpenDrawer-v0").model_dump(mode="json", by_alias=True)
        if lax:
            code = data["subtasks"][1]["code"]
            data["subtasks"][1]["code"] = code.replace(GOAL_LINE, "success = fraction >= 0.05")
        data["task"] = task.name
        return [Solution.model_validate(data) for _ in range(n)]


def _drawer_start(seed: int) -> float:
    env = make_task_env("OpenDrawer-v0")
    try:
        env.reset(seed=seed)
        return env.world_sample["joints"]["StorageFurniture"]["joint_0"]
    finally:
        env.close()


def test_an_unverified_round_is_repaired_from_its_verdicts(tmp_path):
    proposer = ReadsFeedback()
    request = TaskRequest.resolve("Open Drawer")
    run = tmp_path / "run"
    kwargs = dict(candidates=1, progress=False, repair_rounds=2)
    result = acquire(request, proposer, make_execute_fn("oracle", video=False), run, **kwargs)

    assert result.task_success and len(result.rounds) == 2  # stopped once verified
    first, second = result.rounds
    assert first["verified_ATSR"] == 0.0 and second["verified_ATSR"] == 1.0
    told = proposer.feedback[1]
    assert "cand_000: claimed_not_verified" in told
    start = _drawer_start(seed=0)  # the randomized world of seed 0 starts the drawer ajar
    assert f"StorageFurniture/joint_0 moved from {start:.2f} to" in told  # final joints vs goal
    summary = json.loads((run / "summary.json").read_text())
    assert [r["verified"] for r in summary["rounds"]] == [0, 1]
    verdicts = {c["candidate"]: c["verdict"] for c in summary["candidates"]}
    assert verdicts == {"cand_000": "claimed_not_verified", "r1_cand_000": "verified"}
    assert (run / "proposals" / "round_1.json").exists()
    assert "Claimed and verified disagree" in (run / "summary.md").read_text()

    # resuming repeats nothing: no new proposals, the same outcomes
    again = ReadsFeedback()
    resumed = acquire(request, again, make_execute_fn("oracle", video=False), run, resume=True,
                      **kwargs)
    assert again.feedback == [] and resumed.rounds == result.rounds
