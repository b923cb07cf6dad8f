"""Judge wrappers render frames only on the steps a judge reads them (live PyBullet env).

``vlm-step`` reads keyframes every ``every`` steps (and the last): the wrapper must render
exactly those, and the judge must send exactly the requests recorded from a real server
over the same episode rendered every step (replay serves only recorded requests, images
included), so the Φ trace is the one of the render-every-step path.
"""

from __future__ import annotations

import numpy as np
import pytest

from simjudge.judges import JudgeContext, JudgePanel, JudgeReward, make_judge
from simjudge.skills.scripted import ScriptedPolicy
from simjudge.tasks.spec import make_task_env
from tests.judges.vlm.fixtures import TASK, judge_for, load_frames, replay_client, run_step


def _count_renders(env) -> list[int]:
    inner = env.unwrapped
    render = inner.render
    steps: list[int] = []

    def counted():
        steps.append(inner.elapsed_steps)
        return render()

    inner.render = counted
    return steps


def _oracle_episode(judge, horizon: int = 100):
    # the fixed start: the recorded exchanges hold the fixed world's frames
    env = JudgeReward(make_task_env("OpenDrawer-v0", render_mode="rgb_array", horizon=horizon,
                                    randomization=None), judge, context=JudgeContext(task=TASK))
    rendered = _count_renders(env)
    obs, _ = env.reset(seed=0)
    act = ScriptedPolicy(env.unwrapped, seed=0)
    phis = [judge.explain(env.last_fast).phi]
    while True:
        obs, _, terminated, truncated, _ = env.step(act(obs))
        phis.append(judge.explain(env.last_fast).phi)
        if terminated or truncated:
            break
    env.close()
    return rendered, phis


def test_vlm_step_renders_only_its_keyframes_and_sends_the_recorded_requests():
    judge = judge_for("step", replay_client())  # every=5
    rendered, phis = _oracle_episode(judge)
    last = len(phis) - 1
    keyframes = [s for s in range(last + 1) if s % 5 == 0 or s == last]
    assert rendered == keyframes  # not one render more
    assert len(rendered) == 7 and last + 1 == 27  # 7 renders instead of 27
    # the same Φ as the judge fed every recorded frame of this episode
    reference = [s.phi for s in run_step(judge_for("step", replay_client()), load_frames("oracle"))]
    assert phis == reference


def test_frame_judges_without_keyframes_still_render_every_step():
    judge = make_judge("image-progress")
    env = JudgeReward(make_task_env("OpenDrawer-v0", render_mode="rgb_array", horizon=6), judge)
    rendered = _count_renders(env)
    env.reset(seed=0)
    for _ in range(6):
        env.step(np.zeros(7, np.float32))
    env.close()
    assert rendered == list(range(7))


def test_panel_renders_when_any_member_reads_a_frame():
    step = judge_for("step", replay_client())
    panel = JudgePanel([step, make_judge("privileged")])
    assert [panel.wants_frame(s, False) for s in range(6)] == [True] * 6  # before the first judged
    step.reset(JudgeContext(task=TASK))
    step._held = object()  # a keyframe was judged
    assert [panel.wants_frame(s, s == 7) for s in range(8)] == [
        True, False, False, False, False, True, False, True]
    assert not make_judge("privileged").wants_frame(0, True)


@pytest.mark.parametrize("every", [1, 3])
def test_wants_frame_follows_every(every):
    judge = make_judge("vlm-step", client=replay_client(), every=every)
    judge.reset(JudgeContext(task=TASK))
    judge._held = object()
    assert [judge.wants_frame(s, False) for s in range(7)] == [s % every == 0 for s in range(7)]
