"""Env step throughput bare vs wrapped with a judge panel and a recorder, side by side.

The wrapped env is ``JudgeRecord(env, JudgePanel([code success judge, privileged progress
judge]))``: the proposal's success condition compiled from generated code (allowlist,
guards, time limit) and the ground-truth Φ, with every signal, the privileged state summary
and the streaming OPD metrics recorded (in memory). Both envs replay the same random
actions (suction off, the common case of reward subtasks) over episodes of the task's
horizon, resets included; the measurements alternate in rounds so machine noise hits both
alike. Prints steps/s of both (medians), per-step overhead, the judges' own time per
observe, the in-run split (the share of the wrapped env's time spent in the bare env's own
``step``/``reset``, timed as they happen, robust to load) and ``ratio: X`` = the median over
rounds of wrapped ÷ bare steps/s of the same round (target ≥ 0.95).

Time is the process's CPU time by default (``--clock cpu``): physics runs in-process, and
CPU time is what the judges add, whereas wall time on a shared machine mostly measures
other people's jobs. ``--clock wall`` measures wall time.

Usage: ``python bench/judge_overhead.py [--task OpenDrawer-v0] [--steps 2000] [--rounds 7]
[--clock cpu|wall]``
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from simjudge.judges import CodeSuccessJudge, JudgePanel, JudgeRecord, PrivilegedProgressJudge
from simjudge.tasks.spec import load_task, make_task_env


def success_code(task: str) -> str:
    """A generated-style success condition for the task's goal joint (or its object)."""
    goal = load_task(task).goal
    if goal is None or goal.kind != "joint":
        obj = goal.object if goal is not None else load_task(task).object
        return f'success = get_position(self, "{obj}")[2] > 0.5\n'
    compare = ">=" if goal.direction == "open" else "<="
    return (
        f'angle = get_joint_state(self, "{goal.object}", "{goal.joint}")\n'
        f'low, high = get_joint_limit(self, "{goal.object}", "{goal.joint}")\n'
        f"success = angle {compare} low + {goal.threshold} * (high - low)\n"
    )


CLOCKS = {"cpu": time.process_time, "wall": time.perf_counter}


def _rate(env, actions: np.ndarray, clock=time.process_time) -> float:
    """Steps/s over ``actions``, resetting at episode ends (resets are timed too)."""
    env.reset(seed=0)
    start = clock()
    for action in actions:
        _, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            env.reset(seed=0)
    return len(actions) / (clock() - start)


def _split(wrapped, actions: np.ndarray, clock=time.process_time) -> float:
    """Share of the wrapped env's time spent inside the bare env's ``step`` and ``reset``.

    Measured within one run (the inner calls are timed as they happen), so load from other
    processes scales both parts alike; this is the ratio the alternating rounds estimate.
    """
    inner = wrapped.unwrapped
    spent = [0.0]

    def timed(method):
        def call(*args, **kwargs):
            start = clock()
            try:
                return method(*args, **kwargs)
            finally:
                spent[0] += clock() - start
        return call

    inner.step, inner.reset = timed(inner.step), timed(inner.reset)
    try:
        wrapped.reset(seed=0)
        spent[0] = 0.0
        start = clock()
        for action in actions:
            _, _, terminated, truncated, _ = wrapped.step(action)
            if terminated or truncated:
                wrapped.reset(seed=0)
        total = clock() - start
    finally:
        del inner.step, inner.reset
    return spent[0] / total


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--task", default="OpenDrawer-v0")
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="cpu")
    args = parser.parse_args()
    clock = CLOCKS[args.clock]

    bare = make_task_env(args.task)
    judge = JudgePanel([CodeSuccessJudge(success_code(args.task)), PrivilegedProgressJudge()])
    wrapped = JudgeRecord(make_task_env(args.task), judge)
    rng = np.random.default_rng(0)
    actions = rng.uniform(-1, 1, size=(args.steps, 7)).astype(np.float32)
    actions[:, 6] = -1.0
    _rate(bare, actions[:200])  # warm up both (imports, caches, compiled code)
    _rate(wrapped, actions[:200])
    bare_rates, wrapped_rates, ratios = [], [], []
    for _ in range(args.rounds):
        bare_rates.append(_rate(bare, actions, clock))
        wrapped_rates.append(_rate(wrapped, actions, clock))
        ratios.append(wrapped_rates[-1] / bare_rates[-1])
    bare_rate = statistics.median(bare_rates)
    wrapped_rate = statistics.median(wrapped_rates)
    split = statistics.median(_split(wrapped, actions, clock) for _ in range(3))
    stats = {name: member.stats["observe"] for name, member in judge.judges.items()}
    wrapped.close()
    bare.close()

    print(f"task: {args.task}  horizon: {bare.horizon}  rounds: {args.rounds}  "
          f"steps/round: {args.steps}  clock: {args.clock}")
    print(f"bare env steps/s (median):    {bare_rate:,.0f}")
    print(f"wrapped env steps/s (median): {wrapped_rate:,.0f}")
    print(f"overhead per step: {1e6 * (1 / wrapped_rate - 1 / bare_rate):.1f} us")
    for name, stat in stats.items():
        print(f"  {name}: {stat.mean_ms * 1000:.1f} us per observe ({stat.calls} calls)")
    print(f"per-round ratios: {', '.join(f'{r:.3f}' for r in ratios)}")
    print(f"in-run split (bare env time / wrapped env time): {split:.3f}")
    print(f"ratio: {statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main()
