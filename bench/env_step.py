"""SimEnv step throughput vs raw physics of the same scene, measured side by side.

Prints SimEnv control steps/s, raw backend physics steps/s of the same built
scene, and ``ratio: X`` = SimEnv steps/s × frameskip ÷ raw physics steps/s
(the share of time a control step spends in physics; target ≥ 0.5). Raw
physics replays the joint targets the env itself commanded, with the same
single motor call per control step, so both simulate the same motion.

Why two envs of the same task: the raw replay runs on its own copy of the
scene, so the two measurements can alternate in short chunks (``--chunk``
steps each) instead of whole rounds; load from other processes then hits both
alike. Each round thus gives a paired ratio, and ``ratio`` is their median
(``--chunk`` equal to ``--steps`` gives plain round-by-round alternation).
Also prints where a control step's time goes (an instrumented pass, separate
from the timing: IK and motor command, physics, observation, info) with the
share of physics, what a one-env ``SyncVectorEnv`` adds per step with
``info_mode="full"`` and ``"minimal"`` (merging the info dicts), and the
resident memory added per env (``memory per env``; target ≤ 40 MiB).

Usage: ``python bench/env_step.py [--task OpenDrawer-v0] [--steps 2000] [--rounds 5]
[--chunk 200] [--backend pybullet|mujoco|sapien]``
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time

import numpy as np
import psutil

from simjudge.tasks.spec import make_task_env

__all__ = ["main"]


def _record_targets(env, actions: np.ndarray) -> list[np.ndarray]:
    """Arm joint targets the env commands for ``actions`` (recorded outside the timing)."""
    robot = env.scene.robot
    targets: list[np.ndarray] = []
    command = robot.command
    robot.command = lambda q: (targets.append(np.array(q)), command(q))[1]
    try:
        env.reset(seed=0)
        for action in actions:
            env.step(action)
    finally:
        robot.command = command
    return targets


def _round(
    env, raw_env, actions: np.ndarray, targets: list[np.ndarray], chunk: int
) -> tuple[float, float]:
    """One round: SimEnv control steps/s and raw physics steps/s, timed in alternating chunks."""
    env.reset(seed=0)
    raw_env.reset(seed=0)
    backend, robot, frameskip = raw_env.backend, raw_env.scene.robot, raw_env.frameskip
    env_time = raw_time = 0.0
    for start in range(0, len(actions), chunk):
        t0 = time.perf_counter()
        for action in actions[start : start + chunk]:
            env.step(action)
        t1 = time.perf_counter()
        for q in targets[start : start + chunk]:
            robot.command(q)  # the same single motor call the env makes
            backend.step(frameskip)
        t2 = time.perf_counter()
        env_time += t1 - t0
        raw_time += t2 - t1
    return len(actions) / env_time, len(targets) * frameskip / raw_time


def _parts(env, actions: np.ndarray) -> dict[str, float]:
    """Mean µs per control step in each part of ``SimEnv.step`` (instrumented, not timed above)."""
    spent: dict[str, float] = {}
    originals = []

    def timed(owner, name: str, label: str) -> None:
        function = getattr(owner, name)
        originals.append((owner, name, function))

        def wrapper(*args, **kwargs):
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                spent[label] = spent.get(label, 0.0) + time.perf_counter() - start

        setattr(owner, name, wrapper)

    timed(env, "_apply_action", "apply action (IK, motor)")
    timed(env.backend, "step", "physics")
    timed(env._obs, "observe", "observation")
    timed(env, "get_info", "info (goal, summary)")
    try:
        env.reset(seed=0)
        spent.clear()
        start = time.perf_counter()
        for action in actions:
            env.step(action)
        total = time.perf_counter() - start
    finally:
        for owner, name, _ in reversed(originals):
            delattr(owner, name)  # the instance attribute shadowed the class's method
    spent["rest of step"] = total - sum(spent.values())
    spent["total"] = total
    return {label: seconds / len(actions) * 1e6 for label, seconds in spent.items()}


def _vector_overhead(task: str, info_mode: str, actions: np.ndarray, chunk: int = 25) -> float:
    """µs per step a one-env ``SyncVectorEnv`` adds over the env itself.

    The plain env and the vector env alternate in chunks of ``chunk`` steps; the result is the
    median over chunk pairs of the per-step difference (robust to load from other processes).
    """
    import gymnasium as gym

    plain = make_task_env(task, horizon=10**9, info_mode=info_mode)
    vector = gym.vector.SyncVectorEnv(
        [lambda: make_task_env(task, horizon=10**9, info_mode=info_mode)]
    )
    plain.reset(seed=0)
    vector.reset(seed=0)
    differences = []
    for start in range(0, len(actions) - chunk + 1, chunk):
        part = actions[start : start + chunk]
        t0 = time.perf_counter()
        for action in part:
            plain.step(action)
        t1 = time.perf_counter()
        for action in part:
            vector.step(action[None, :])
        t2 = time.perf_counter()
        differences.append(((t2 - t1) - (t1 - t0)) / chunk * 1e6)
    vector.close()
    plain.close()
    return statistics.median(differences)


def main() -> None:
    """Run the benchmark and print the rates, the parts of a step and ``ratio: X``."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--task", default="OpenDrawer-v0")
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--chunk", type=int, default=200, help="steps per alternation")
    parser.add_argument("--envs", type=int, default=4, help="envs created for the memory estimate")
    parser.add_argument("--backend", default="pybullet", choices=["pybullet", "mujoco", "sapien"])
    args = parser.parse_args()
    chunk = max(1, min(args.chunk, args.steps))

    proc = psutil.Process()
    gc.collect()
    rss0 = proc.memory_info().rss
    env = make_task_env(args.task, horizon=10**9, backend=args.backend)
    raw_env = make_task_env(args.task, horizon=10**9, backend=args.backend)  # the same scene, for the raw replay
    rng = np.random.default_rng(0)
    actions = rng.uniform(-1, 1, size=(args.steps, 7)).astype(np.float32)
    actions[:, 6] = -1.0  # suction off: the common case for reward subtasks
    targets = _record_targets(env, actions)
    env_rates, phys_rates, ratios = [], [], []
    for _ in range(args.rounds):
        env_rate, phys_rate = _round(env, raw_env, actions, targets, chunk)
        env_rates.append(env_rate)
        phys_rates.append(phys_rate)
        ratios.append(env_rate * env.frameskip / phys_rate)
    env_rate = statistics.median(env_rates)
    phys_rate = statistics.median(phys_rates)
    ratio = statistics.median(ratios)
    parts = _parts(env, actions)
    vector_us = {mode: _vector_overhead(args.task, mode, actions) for mode in ("full", "minimal")}

    extra = [make_task_env(args.task, backend=args.backend) for _ in range(max(args.envs - 2, 0))]
    gc.collect()
    per_env_mb = (proc.memory_info().rss - rss0) / (len(extra) + 2) / 2**20
    for e in extra:
        e.close()
    raw_env.close()
    env.close()

    print(
        f"task: {args.task}  backend: {args.backend}  frameskip: {env.frameskip}  rounds: {args.rounds}  "
        f"steps/round: {args.steps}  chunk: {chunk}"
    )
    print(f"SimEnv control steps/s (median): {env_rate:,.0f}")
    print(f"raw physics steps/s   (median): {phys_rate:,.0f}")
    print("per-round ratios: " + " ".join(f"{r:.3f}" for r in ratios))
    print("one control step, µs (instrumented pass):")
    print("  " + ", ".join(f"{label} {us:.0f}" for label, us in parts.items()))
    print(f"  share of physics: {parts['physics'] / parts['total']:.2f}")
    print(
        "SyncVectorEnv(n=1) adds per step: "
        + ", ".join(f"info_mode={mode} {us:.0f} µs" for mode, us in vector_us.items())
    )
    print(f"memory per env (RSS, {len(extra) + 2} envs): {per_env_mb:.1f} MiB")
    print(f"ratio: {ratio:.3f}")


if __name__ == "__main__":
    main()
