"""SimEnv step throughput vs raw physics of the same scene, measured side by side.

Prints SimEnv control steps/s, raw backend physics steps/s of the same built
scene, and ``ratio: X`` = SimEnv steps/s × frameskip ÷ raw physics steps/s
(the share of time a control step spends in physics; target ≥ 0.5). The two
measurements alternate in rounds so machine noise hits both alike. Also prints
the peak resident memory added per env.

Usage: ``python bench/env_step.py [--task OpenDrawer-v0] [--steps 2000] [--rounds 5]``
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time

import numpy as np
import psutil

from simjudge.tasks.registry import make_task_env


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


def _env_rate(env, actions: np.ndarray) -> float:
    env.reset(seed=0)
    start = time.perf_counter()
    for action in actions:
        env.step(action)
    return len(actions) / (time.perf_counter() - start)


def _physics_rate(env, targets: list[np.ndarray]) -> float:
    env.reset(seed=0)
    backend, robot = env.backend, env.scene.robot
    start = time.perf_counter()
    for q in targets:
        robot.command(q)  # the same single motor call the env makes
        backend.step(env.frameskip)
    return len(targets) * env.frameskip / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", default="OpenDrawer-v0")
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--envs", type=int, default=4, help="envs created for the memory estimate")
    args = parser.parse_args()

    proc = psutil.Process()
    gc.collect()
    rss0 = proc.memory_info().rss
    env = make_task_env(args.task, horizon=10**9)
    rng = np.random.default_rng(0)
    actions = rng.uniform(-1, 1, size=(args.steps, 7)).astype(np.float32)
    actions[:, 6] = -1.0  # suction off: the common case for reward subtasks
    targets = _record_targets(env, actions)
    env_rates, phys_rates = [], []
    for _ in range(args.rounds):
        env_rates.append(_env_rate(env, actions))
        phys_rates.append(_physics_rate(env, targets))
    env_rate = statistics.median(env_rates)
    phys_rate = statistics.median(phys_rates)
    ratio = env_rate * env.frameskip / phys_rate

    extra = [make_task_env(args.task) for _ in range(args.envs - 1)]
    gc.collect()
    per_env_mb = (proc.memory_info().rss - rss0) / args.envs / 2**20
    for e in extra:
        e.close()
    env.close()

    print(f"task: {args.task}  frameskip: {env.frameskip}  rounds: {args.rounds}  steps/round: {args.steps}")
    print(f"SimEnv control steps/s (median): {env_rate:,.0f}")
    print(f"raw physics steps/s   (median): {phys_rate:,.0f}")
    print(f"memory per env (RSS, {args.envs} envs): {per_env_mb:.1f} MiB")
    print(f"ratio: {ratio:.3f}")


if __name__ == "__main__":
    main()
