"""The judges' fast path: lazy signals, info-reading privileged judge, success every k steps."""

from __future__ import annotations

import math

import numpy as np
import pytest

from simjudge.judges import (
    CodeSuccessJudge,
    JudgeContext,
    JudgePanel,
    JudgeRecord,
    JudgeReward,
    JudgeVerify,
    PrivilegedProgressJudge,
    Transition,
)
from simjudge.judges.metrics import StreamingOPD, opd_metrics
from simjudge.judges.metrics.opd import streamed_opd_metrics
from simjudge.judges.signals import VERDICT_OF_CODE
from simjudge.skills.scripted import ScriptedPolicy
from simjudge.tasks.spec import make_task_env
from tests.judges.helpers import ConstantJudge

ALWAYS = "success = True\n"


class CountingSuccess(CodeSuccessJudge):
    """A code success judge that counts how often its code really runs."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.runs: list[int] = []

    def _fast(self, step, view, info, done, transition):
        self.runs.append(step)
        return super()._fast(step, view, info, done, transition)


class CountingPrivileged(PrivilegedProgressJudge):
    """A privileged judge that counts its own goal evaluations."""

    evaluations = 0

    def facts(self, view):
        self.evaluations += 1
        return super().facts(view)


def _random_actions(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1, 1, size=(n, 7)).astype(np.float32)


def test_the_privileged_judge_reads_what_the_env_computed():
    judge = CountingPrivileged()
    env = JudgeVerify(make_task_env("OpenDrawer-v0", horizon=8), judge)
    obs, info = env.reset(seed=0)
    assert judge.evaluations == 1  # once at reset, for the key set of its details
    for action in _random_actions(8):
        obs, reward, terminated, truncated, info = env.step(action)
        assert info["judge"]["phi"] == info["progress"]
        assert set(info["judge"]["details"]) >= {"success", "fail", "joint_fraction"}
    assert judge.evaluations == 1
    env.close()


def test_minimal_info_keeps_the_signals_and_the_judge_evaluates_itself():
    signals = {}
    for mode in ("full", "minimal"):
        judge = CountingPrivileged()
        env = JudgeVerify(make_task_env("OpenDrawer-v0", horizon=6, info_mode=mode), judge)
        obs, info = env.reset(seed=1)
        rows = [info["judge"]]
        for action in _random_actions(6, seed=1):
            *_, info = env.step(action)
            rows.append(info["judge"])
        signals[mode] = rows
        if mode == "minimal":
            assert set(info) == {
                "success", "fail", "progress", "elapsed_steps", "physics_error", "judge",
                "is_success",
            }
            assert judge.evaluations == 7
        env.close()
    assert signals["full"] == signals["minimal"]


def test_unknown_info_mode_names_the_choices():
    with pytest.raises(ValueError, match="info_mode.*'full', 'minimal'"):
        make_task_env("OpenDrawer-v0", info_mode="tiny")


def test_success_type_judges_run_every_k_steps_and_on_the_last(short_drawer_env):
    judge = CountingSuccess(ALWAYS)
    truth = PrivilegedProgressJudge()
    panel = JudgePanel({"code": judge, "truth": truth})
    env = JudgeRecord(short_drawer_env, panel, success_every=4)
    env.reset(seed=0)
    for action in _random_actions(6):
        *_, terminated, truncated, _ = env.step(action)
    assert truncated and judge.runs == [0, 4, 6]  # 6 is the last step (horizon 6)
    assert truth.success_every == 1  # Φ judges judge every step
    assert judge.stats["observe"].calls == 7
    record = env.last_record
    assert [s.signal.details["code"]["verdict"] for s in record.steps] == ["success"] * 7


def test_success_every_is_validated_and_belongs_to_the_innermost_wrapper(drawer_env):
    with pytest.raises(ValueError, match="success_every must be an int >= 1"):
        JudgeVerify(drawer_env, CodeSuccessJudge(ALWAYS), success_every=0)
    judge = CodeSuccessJudge(ALWAYS)
    inner = JudgeReward(drawer_env, judge, success_every=2)
    with pytest.raises(ValueError, match="innermost"):
        JudgeVerify(inner, judge, success_every=2)


def test_signals_are_built_only_when_asked_for(short_drawer_env):
    env = JudgeReward(short_drawer_env, PrivilegedProgressJudge())
    env.reset(seed=0)
    env.step(_random_actions(1)[0])
    assert env._signal is None  # nothing built on the hot path
    signal = env.last_signal
    assert signal is not None and env.last_signal is signal
    reward, phi, code, _ = env.last_fast
    assert (signal.reward, signal.phi, signal.verdict) == (reward, phi, VERDICT_OF_CODE[code])


def test_fast_path_and_observe_agree_on_every_oracle_state():
    env = make_task_env("OpenDrawer-v0")
    wrapped = JudgeVerify(env, PrivilegedProgressJudge())
    slow = PrivilegedProgressJudge()  # never claimed: evaluates the goal itself
    policy = ScriptedPolicy(env, noise=0.0, seed=0)
    obs, info = wrapped.reset(seed=0)
    slow.reset(JudgeContext.from_env(env))
    for step in range(env.horizon + 1):
        expected = slow.observe(Transition(step=step, view=env.view, info=info))
        assert wrapped.last_signal == expected
        if step == env.horizon or info.get("is_success"):
            break
        obs, reward, terminated, truncated, info = wrapped.step(policy(obs))
    assert wrapped.last_signal.verdict == "success"
    env.close()


def test_physics_errors_zero_the_details_on_both_paths(drawer_env):
    judge = PrivilegedProgressJudge()
    env = JudgeReward(drawer_env, judge)
    obs, info = env.reset(seed=0)
    good = env.last_signal
    fast = judge.observe_fast(1, drawer_env.view, {"physics_error": True})
    bad = judge.explain(fast)
    assert bad.verdict == "failure" and bad.phi == 0.0
    assert set(bad.details) == set(good.details) and bad.details["fail"] is True
    assert judge.observe(Transition(step=1, view=drawer_env.view, info={"physics_error": True})) == bad


def test_live_opd_streams_and_the_batch_opd_matches_it(short_drawer_env):
    env = JudgeRecord(short_drawer_env, PrivilegedProgressJudge(), streaming_opd=True)
    env.reset(seed=0)
    for action in _random_actions(6):
        *_, info = env.step(action)
    assert info["judge_record"]["opd"] == env.live_opd
    batch = opd_metrics(env.last_record.phi, 0.01).as_dict()
    assert env.live_opd.keys() == batch.keys()
    assert all(math.isclose(env.live_opd[m], batch[m], abs_tol=1e-12) for m in batch)
    with pytest.raises(ValueError, match="streaming_opd=True"):
        _ = JudgeRecord(make_task_env("OpenDrawer-v0"), PrivilegedProgressJudge()).live_opd


@pytest.mark.parametrize("seed", range(5))
def test_streamed_opd_is_the_streaming_accumulator_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    phi = np.clip(np.cumsum(rng.normal(0, 0.05, 200)) + 0.3, 0, 1).tolist()
    acc = StreamingOPD(0.01, 4)
    acc.reset(phi[0])
    for value in phi[1:]:
        acc.update(value)
    assert streamed_opd_metrics(phi, 0.01, 4) == acc.metrics()
    assert streamed_opd_metrics(np.array(phi), 0.01, 4) == acc.metrics()  # the array path
    assert streamed_opd_metrics(phi[:1], 0.01).T == 0


@pytest.mark.parametrize("seed", range(3))
def test_streamed_opd_matches_on_plateaus_zeros_and_steps(seed):
    # repeated values, exact 0 and 1, -0.0 and coarse steps: where compensated sums and the
    # stagnation count are most likely to differ if the pass took a shortcut
    rng = np.random.default_rng(10 + seed)
    for _ in range(200):
        n = int(rng.integers(1, 120))
        phi = np.round(rng.random(n), int(rng.integers(0, 3))).tolist()
        phi = [-0.0 if value == 0.0 and rng.random() < 0.5 else value for value in phi]
        acc = StreamingOPD(0.02, 3)
        acc.reset(phi[0])
        for value in phi[1:]:
            acc.update(value)
        assert repr(streamed_opd_metrics(phi, 0.02, 3)) == repr(acc.metrics())  # -0.0 too


def test_streamed_opd_gives_the_same_metrics_for_every_input_form():
    """Lists, tuples, arrays, numpy scalars and ints of the same Φ: the same metrics."""
    phi = [0.0, 0.25, 0.25, 0.75, 1.0]
    expected = streamed_opd_metrics(phi, 0.01)
    for form in (tuple(phi), np.array(phi), [np.float64(v) for v in phi], [0, 0.25, 0.25, 0.75, 1]):
        assert streamed_opd_metrics(form, 0.01) == expected
    assert streamed_opd_metrics(phi, 0) == streamed_opd_metrics(phi, 0.0)  # an int ε


def test_streamed_opd_rejects_bad_potentials():
    with pytest.raises(ValueError, match=r"`phi\[2\]` = 1.5 is outside \[0, 1\]"):
        streamed_opd_metrics([0.0, 0.5, 1.5], 0.01)
    with pytest.raises(ValueError, match="empty"):
        streamed_opd_metrics([], 0.01)
    with pytest.raises(ValueError, match=r"`phi\[1\]` = nan is not finite"):
        streamed_opd_metrics([0.0, float("nan")], 0.01)
    with pytest.raises(ValueError, match=r"`phi\[0\]` = inf is not finite"):
        streamed_opd_metrics([float("inf"), 0.5], 0.01)


@pytest.mark.parametrize("vote", ["majority", "any", "all"])
def test_panel_fast_path_combines_exactly_as_observe(vote):
    rng = np.random.default_rng({"majority": 0, "any": 1, "all": 2}[vote])
    verdicts = ["success", "failure", "undecided"]
    for _ in range(40):
        n = int(rng.integers(1, 5))
        members = [
            ConstantJudge(
                reward=float(rng.normal()),
                phi=None if rng.random() < 0.3 else float(rng.random()),
                verdict=verdicts[int(rng.integers(3))],
            )
            for _ in range(n)
        ]
        weights = [float(w) for w in rng.choice([0.0, 0.5, 1.0, 3.0], size=n)]
        weights[0] += 0.25  # a positive sum
        panel = JudgePanel(members, weights=weights, vote=vote)
        panel.reset(JudgeContext())
        fast = panel.observe_fast(0, None, {})
        slow = panel.observe(Transition(step=0))
        assert panel.explain(fast) == slow
        assert (fast[0], fast[1], VERDICT_OF_CODE[fast[2]]) == (slow.reward, slow.phi, slow.verdict)


def test_two_member_panel_unrolled_is_the_general_combination_bit_for_bit():
    rng = np.random.default_rng(7)
    verdicts = ["success", "failure", "undecided"]
    for _ in range(300):
        members = [
            ConstantJudge(
                reward=float(rng.choice([rng.normal(), 0.0, -0.0])),
                phi=None if rng.random() < 0.2 else float(rng.choice([rng.random(), 0.0, 1.0])),
                verdict=verdicts[int(rng.integers(3))],
            )
            for _ in range(2)
        ]
        weights = [float(w) for w in rng.choice([0.0, 0.5, 1.0, 3.0, 0.1], size=2)]
        weights[int(rng.integers(2))] += 0.25  # a positive sum
        panel = JudgePanel(members, weights=weights)
        panel.reset(JudgeContext())
        assert panel._pair is not None, "the two-member majority panel takes the unrolled path"
        fast = panel.observe_fast(0, None, {})
        general = panel._combined(list(fast[3]))
        assert repr(fast[:3]) == repr(general[:3])
        slow = panel.observe(Transition(step=0))
        assert panel.explain(fast) == slow


@pytest.mark.parametrize("seed", range(3))
def test_opd_scorer_is_streamed_opd_bit_for_bit_and_both_are_the_accumulator(seed):
    """opd_scorer's direct path gives streamed_opd_metrics' dict to the bit (-0.0 too), and
    both are what StreamingOPD gives after reset and updates; MC's edges and T = 0 included."""
    from simjudge.judges.metrics import StreamingOPD, opd_scorer

    rng = np.random.default_rng(20 + seed)
    for _ in range(300):
        n = int(rng.integers(1, 150))
        phi = np.round(rng.random(n), int(rng.integers(0, 3))).tolist()
        phi = [-0.0 if value == 0.0 and rng.random() < 0.5 else value for value in phi]
        epsilon, k = float(rng.choice([0.0, 0.01, 0.1])), int(rng.integers(1, 8))
        expected = repr(streamed_opd_metrics(phi, epsilon, k).as_dict())
        acc = StreamingOPD(epsilon, k)
        acc.reset(phi[0])
        for value in phi[1:]:
            acc.update(value)
        score = opd_scorer(epsilon, k)
        assert repr(score(phi)) == expected
        assert repr(acc.metrics().as_dict()) == expected
        assert repr(score(tuple(phi))) == expected


def test_opd_scorer_checks_its_parameters_now_and_bad_phi_when_called():
    from simjudge.judges.metrics import opd_scorer

    with pytest.raises(ValueError, match="epsilon"):
        opd_scorer(-1.0)
    with pytest.raises(ValueError, match="k"):
        opd_scorer(0.01, 0)
    score = opd_scorer(0.01)
    for bad in ([0.0, 1.5], [float("nan")], []):
        with pytest.raises(ValueError):
            score(bad)
    with pytest.raises(ValueError, match="phi"):
        score([0.5, 1.5])  # out of range: the checked path's error
    assert score([0, 1]) == score([0.0, 1.0])  # ints: the checked path, the same numbers
    with pytest.raises(ValueError, match="epsilon"):
        JudgeRecord(make_task_env("OpenDrawer-v0"), PrivilegedProgressJudge(), epsilon=-0.5)
