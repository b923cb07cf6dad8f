"""Predicates on real simulator states, and the milestone DAG judge."""

from __future__ import annotations

import pickle
from dataclasses import dataclass

import numpy as np
import pytest

from simjudge.envs.state_api import UnknownNameError
from simjudge.judges import (
    And,
    Holding,
    Inside,
    JointClosed,
    JointOpen,
    JudgeContext,
    JudgeVerify,
    Milestone,
    MilestoneJudge,
    NearLink,
    Not,
    On,
    Or,
    Predicate,
    PredicateJudge,
    Pressed,
    Transition,
)
from simjudge.skills.scripted import ScriptedPolicy
from simjudge.tasks.spec import make_task_env
from tests.judges.helpers import run_oracle

CAB = "StorageFurniture"


def _oracle_states(env, predicates: dict[str, Predicate], seed: int = 0) -> list[dict[str, bool]]:
    """Predicate values on every state of an oracle rollout (reset state first)."""
    policy = ScriptedPolicy(env, seed=seed)
    obs, _ = env.reset(seed=seed)
    trace = [{k: p(env.view) for k, p in predicates.items()}]
    for _ in range(env.horizon):
        obs, _, terminated, truncated, _ = env.step(policy(obs))
        trace.append({k: p(env.view) for k, p in predicates.items()})
        if terminated or truncated:
            break
    return trace


def test_opening_a_drawer_with_the_oracle(drawer_env):
    preds = {
        "open": JointOpen(CAB, "joint_0", 0.5),
        "closed": JointClosed(CAB, "joint_0", 0.1),
        "holding": Holding(CAB, "link_1"),
        "holding_any": Holding(CAB),
        "near": NearLink(CAB, "link_1", 0.1),
        "other_open": JointOpen(CAB, "joint_2", 0.5),
    }
    trace = _oracle_states(drawer_env, preds)
    first, last = trace[0], trace[-1]
    assert first["closed"] and not first["open"] and not first["holding"] and not first["near"]
    assert last["open"] and not last["closed"] and last["holding"] and last["holding_any"]
    assert any(t["near"] for t in trace) and not any(t["other_open"] for t in trace)


def test_pressing_a_button():
    env = make_task_env("PressButton-v0")
    try:
        trace = _oracle_states(env, {"pressed": Pressed("ButtonPanel", "joint_0", 0.5)})
    finally:
        env.close()
    assert not trace[0]["pressed"] and trace[-1]["pressed"]


@pytest.mark.parametrize(
    "task, predicate",
    [("PutBreadInBowl-v0", Inside("Bread", "Bowl")), ("StackCubeOnCylinder-v0", On("Cube", "Can"))],
)
def test_placing_objects(task, predicate):
    env = make_task_env(task)
    try:
        trace = _oracle_states(env, {"placed": predicate, "held": Holding(predicate.a)})
    finally:
        env.close()
    assert not trace[0]["placed"] and trace[-1]["placed"] and not trace[-1]["held"]
    assert any(t["held"] for t in trace)


def test_composition_and_description(drawer_env):
    drawer_env.reset(seed=0)
    view = drawer_env.view
    closed, opened = JointClosed(CAB, "joint_0"), JointOpen(CAB, "joint_0")
    assert (closed & ~opened)(view) and (opened | closed)(view) and not And(closed, opened)(view)
    assert Or(opened, Not(closed)).describe() == (
        f"(JointOpen({CAB}.joint_0 >= 0.5) or not JointClosed({CAB}.joint_0 <= 0.1))"
    )
    assert pickle.loads(pickle.dumps(closed & ~opened)) == closed & ~opened
    with pytest.raises(UnknownNameError, match="joint_9"):
        JointOpen(CAB, "joint_9")(view)
    with pytest.raises(TypeError, match="predicates"):
        And(closed, "open")


# milestone DAG logic on a scripted fake view ----------------------------------------------------


@dataclass(frozen=True)
class Flag(Predicate):
    """Reads ``view[name]`` (the fake view is a dict of booleans)."""

    name: str

    def holds(self, view) -> bool:
        return bool(view[self.name])


def _run(judge: MilestoneJudge, states: list[dict[str, bool]]) -> list:
    judge.reset(JudgeContext())
    return [judge.observe(Transition(step=t, view=s)) for t, s in enumerate(states)]


def _dag(**kw) -> MilestoneJudge:
    return MilestoneJudge(
        [
            Milestone("open", Flag("b"), after=("grasp",)),  # declared before its parent
            Milestone("grasp", Flag("a")),
            Milestone("release", Flag("c"), after=("open",)),
        ],
        **kw,
    )


def test_milestones_count_only_in_dag_order():
    states = [
        {"a": False, "b": True, "c": True},  # b and c hold early: not counted
        {"a": True, "b": True, "c": True},  # grasp reached now; open needs an earlier grasp
        {"a": False, "b": True, "c": True},  # open counts now; release needs an earlier open
        {"a": False, "b": False, "c": True},  # release counts (ever-reached, not held)
    ]
    signals = _run(_dag(), states)
    assert [s.phi for s in signals] == pytest.approx([0, 1 / 3, 2 / 3, 1])
    assert [s.verdict for s in signals] == ["undecided"] * 3 + ["success"]
    assert signals[-1].details["reached"] == {"grasp": True, "open": True, "release": True}
    assert signals[-1].details["holding"] == {"grasp": False, "open": False, "release": True}
    assert [s.details["completion_score"] for s in signals] == [0, 3, 6, 10]
    assert _dag().order == ("grasp", "open", "release")


def test_same_step_prerequisites_and_held_requirement():
    states = [{"a": True, "b": True, "c": True}]
    assert _run(_dag(strict_order=True), states)[-1].phi == pytest.approx(1 / 3)
    assert _run(_dag(strict_order=False), states)[-1].phi == 1.0
    held = _run(_dag(require_held=True), [{"a": True, "b": False, "c": False}] + [
        {"a": False, "b": True, "c": False}, {"a": False, "b": False, "c": True}
    ])  # fmt: skip
    assert held[-1].phi == 1.0 and held[-1].verdict == "undecided"


def test_invalid_dags_are_rejected():
    with pytest.raises(ValueError, match="cycle"):
        MilestoneJudge([Milestone("x", Flag("a"), ("y",)), Milestone("y", Flag("b"), ("x",))])
    with pytest.raises(ValueError, match="unknown milestones"):
        MilestoneJudge([Milestone("x", Flag("a"), ("z",))])
    with pytest.raises(ValueError, match="unique"):
        MilestoneJudge([Milestone("x", Flag("a")), Milestone("x", Flag("b"))])


def test_milestone_judge_on_a_real_rollout(drawer_env):
    judge = MilestoneJudge(
        [
            Milestone("near handle", NearLink(CAB, "link_1", 0.1)),
            Milestone("grasp handle", Holding(CAB, "link_1"), after=("near handle",)),
            Milestone("drawer open", JointOpen(CAB, "joint_0", 0.5), after=("grasp handle",)),
        ]
    )
    out = run_oracle(JudgeVerify(drawer_env, judge))
    phis = [i["judge"]["phi"] for i in out.infos]
    assert phis == sorted(phis) and phis[-1] == 1.0 and out.infos[-1]["is_success"]
    assert np.all(np.diff(phis) >= 0)


def test_predicate_judge_is_binary(drawer_env):
    judge = PredicateJudge(JointOpen(CAB, "joint_0", 0.5))
    out = run_oracle(JudgeVerify(drawer_env, judge, terminate_on_success=False))
    phis = {i["judge"]["phi"] for i in out.infos}
    assert phis == {0.0, 1.0} and out.infos[-1]["judge"]["reason"].endswith("holds")
