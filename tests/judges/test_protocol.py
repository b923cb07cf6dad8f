"""The judge protocol: signals, transitions, contexts and the Judge base class."""

from __future__ import annotations

import json
import math
import pickle

import pytest

from simjudge.envs.articulation import ArticulationTree
from simjudge.judges import (
    VERDICTS,
    Judge,
    JudgeContext,
    JudgeResetNeeded,
    JudgeSignal,
    PrivilegedProgressJudge,
    RuleJudge,
    Transition,
    infer_verb,
    parse_articulation_text,
)
from simjudge.tasks.spec import make_task_env
from tests.judges.helpers import ConstantJudge

# signals ------------------------------------------------------------------------------------


def test_signal_defaults_and_round_trip():
    s = JudgeSignal(reward=1, phi=0.25, verdict="success", reason="done", details={"a": (1, 2)})
    assert s.reward == 1.0 and isinstance(s.reward, float) and s.decided
    assert JudgeSignal.from_dict(json.loads(json.dumps(s.to_dict()))).phi == 0.25
    assert JudgeSignal().verdict == "undecided" and JudgeSignal().phi is None


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        ({"verdict": "maybe"}, "verdict 'maybe' is not valid"),
        ({"reward": math.nan}, "not a finite number"),
        ({"reward": "x"}, "not a finite number"),
        ({"phi": 1.2}, "outside|not a progress potential"),
        ({"phi": math.inf}, "not a progress potential"),
    ],
)
def test_signal_rejects_invalid_values(kwargs, fragment):
    with pytest.raises(ValueError, match=fragment):
        JudgeSignal(**kwargs)


def test_signal_clips_round_off():
    assert JudgeSignal(phi=1.0 + 1e-12).phi == 1.0
    assert JudgeSignal(phi=-1e-12).phi == 0.0
    assert set(VERDICTS) == {"success", "failure", "undecided"}


# the base class ---------------------------------------------------------------------------


def test_observe_counts_times_and_needs_reset():
    judge = ConstantJudge(phi=0.3)
    with pytest.raises(JudgeResetNeeded, match="reset"):
        judge.observe(Transition(step=0))
    judge.reset(JudgeContext())
    for step in range(3):
        assert judge.observe(Transition(step=step)).phi == 0.3
    assert judge.stats["observe"].calls == 3
    assert judge.stats["observe"].seconds >= 0.0 and judge.stats["plan"].calls == 0


def test_unsupported_entry_points_name_the_judge():
    judge = ConstantJudge()
    with pytest.raises(NotImplementedError, match=r"ConstantJudge\('constant'\).*judge_plan"):
        judge.judge_plan("reward", "x = 1", JudgeContext())
    with pytest.raises(NotImplementedError, match="judge_episode"):
        judge.judge_episode(None)
    rule = RuleJudge()
    rule.reset(JudgeContext())
    with pytest.raises(NotImplementedError, match=r"RuleJudge\('rule'\).*supports judge_plan"):
        rule.observe(Transition(step=0))
    assert rule.supported() == ("judge_plan",) and judge.supported() == ("observe",)


def test_hook_returning_something_else_is_a_type_error():
    class Broken(Judge):
        def _observe(self, transition):
            return 0.5

    judge = Broken()
    judge.reset()
    with pytest.raises(TypeError, match="must return a JudgeSignal"):
        judge.observe(Transition(step=0))


def test_clone_is_fresh_and_pickles():
    judge = ConstantJudge(phi=0.7)
    judge.reset(JudgeContext(task="x"))
    judge.observe(Transition(step=0))
    twin = judge.clone()
    assert twin.context is None and twin.stats["observe"].calls == 0
    assert twin.signal == judge.signal and twin is not judge
    again = pickle.loads(pickle.dumps(judge))
    assert again.context.task == "x"


def test_one_judge_cannot_serve_two_envs():
    env_a, env_b = make_task_env("PressButton-v0"), make_task_env("PressButton-v0")
    judge = PrivilegedProgressJudge()
    try:
        judge.claim(env_a)
        judge.claim(env_a)  # the same env again is fine
        with pytest.raises(ValueError, match=r"another env.*clone"):
            judge.claim(env_b)
        judge.clone().claim(env_b)
    finally:
        env_a.close()
        env_b.close()


# contexts -----------------------------------------------------------------------------------


def test_context_from_env_knows_names_trees_goal_and_verb(drawer_env):
    ctx = JudgeContext.from_env(drawer_env)
    assert ctx.object_names == ("StorageFurniture",)
    assert ctx.joint_names("StorageFurniture") == ("joint_0", "joint_2")
    assert "link_1" in ctx.link_names("StorageFurniture")
    assert ctx.joint_limit("StorageFurniture", "joint_0")[0] == 0.0
    assert ctx.joint_limit("StorageFurniture", "joint_1") is None  # fixed
    assert ctx.goal is drawer_env.goal and ctx.verb == "open" and ctx.verb_target == "upper"
    json.dumps(ctx.to_dict())
    assert pickle.loads(pickle.dumps(ctx)).trees == ctx.trees


def test_articulation_text_round_trips(drawer_env):
    tree = drawer_env.scene.objects["StorageFurniture"].tree
    parsed = parse_articulation_text(tree.to_text())
    assert isinstance(parsed, ArticulationTree)
    assert parsed.link_names == tree.link_names and parsed.joint_names == tree.joint_names
    assert parsed.joint("joint_0").upper == pytest.approx(tree.joint("joint_0").upper, rel=1e-3)
    assert parsed.link("link_1").semantic == "handle"
    ctx = JudgeContext(articulation={"Cab": tree.to_text()})
    assert ctx.object_names == ("Cab",) and ctx.joint_names("Cab") == ("joint_0", "joint_2")
    with pytest.raises(ValueError, match="links"):
        parse_articulation_text("no tree here")


def test_verbs_and_derived_contexts():
    assert infer_verb("Close the oven door") == "close" and infer_verb("Turn the knob") == ""
    ctx = JudgeContext(task_name="Open Drawer")
    sub = ctx.with_subtask("reward", "x = 1", name="close the drawer again")
    assert (sub.verb, sub.subtask_kind, sub.subtask_code) == ("close", "reward", "x = 1")
    ep = ctx.for_episode(seed=3, episode=2)
    assert (ep.seed, ep.episode, ep.verb) == (3, 2, "open")


def test_for_episode_equals_replace():
    """The per-reset copy is the context ``dataclasses.replace`` would build (every field)."""
    import dataclasses

    from simjudge.tasks.spec import make_task_env

    env = make_task_env("OpenDrawer-v0")
    try:
        base = JudgeContext.from_env(env, subtask_kind="reward", subtask_code="x = 1")
        fast = base.for_episode(seed=7, episode=3)
        slow = dataclasses.replace(base, seed=7, episode=3)
        assert type(fast) is JudgeContext and fast == slow
        assert fast.to_dict() == slow.to_dict() and (base.seed, base.episode) == (None, 0)
        with pytest.raises(dataclasses.FrozenInstanceError):
            fast.seed = 1  # type: ignore[misc]
    finally:
        env.close()
