"""Cross-backend agreement: the scripted oracle (and reference solutions) on every backend.

For each installed backend (pybullet, mujoco, sapien) and each built-in task, rolls out
the privileged scripted oracle (:class:`~simjudge.skills.scripted.ScriptedPolicy`) with
the same seed and prints, side by side per backend: oracle success, mean final Φ, mean
steps, SimEnv control steps/s (time inside ``env.step``) and raw physics steps/s (the
backend's own ``step`` on the same scene, timed in the same run, interleaved with the
env rollouts so load from other processes hits every backend alike).

Judge agreement: every state of the *pybullet* oracle episode of each task is restored
(``SimEnv.set_state``: portable numbers) into each backend's env of that task and judged
there by the state-reading judges (privileged, noisy, quantized, pairwise); agreement is
the share of (task, step) verdicts equal to pybullet's, so a judge validated on pybullet
that flips on another backend shows here. Tasks the oracle solves on pybullet but not on
another backend are listed with the end facts, to say why.

``--solutions`` also executes the hand-written reference solutions (``tasks/library/
solutions``; planned primitives, reward subtasks by the oracle) on each backend.

The last lines are one per backend:
``<backend>: oracle_success <k>/<n> steps_per_s <x> ratio_vs_pybullet <r>``
where ``ratio_vs_pybullet`` = control steps/s ÷ pybullet's control steps/s.

Usage: ``python bench/backends.py [--backends pybullet mujoco sapien] [--tasks all]
[--seed 0] [--solutions]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from simjudge.envs.backends import available_backends
from simjudge.judges.bench.scoring import judge_states
from simjudge.judges.registry import make_judge
from simjudge.pipelines.judge_bench import task_context
from simjudge.tasks.spec import make_task_env
from simjudge.tasks.spec.task import library_ids

__all__ = ["main"]

JUDGES = ("privileged", "noisy:sigma=0.05,seed=0", "quantized:levels=4", "pairwise")


@dataclass
class Episode:
    """One oracle rollout."""

    success: bool
    final_phi: float
    steps: int
    env_seconds: float
    states: list[Any] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)


def oracle_episode(task: str, backend: str, seed: int) -> Episode:
    """Roll the scripted oracle out once; time only ``env.step``."""
    from simjudge.skills.scripted import ScriptedPolicy

    env = make_task_env(task, backend=backend)
    try:
        policy = ScriptedPolicy(env, seed=seed)
        obs, info = env.reset(seed=seed)
        states = [env.get_state()]
        spent, steps = 0.0, 0
        for steps in range(1, env.horizon + 1):  # noqa: B007 - read after the loop
            action = policy(obs)
            start = time.perf_counter()
            obs, _, terminated, truncated, info = env.step(action)
            spent += time.perf_counter() - start
            states.append(env.get_state())
            if terminated or truncated:
                break
        facts = {k: v for k, v in info.items() if isinstance(v, bool | int | float)}
        return Episode(bool(info["success"]), float(info["progress"]), steps, spent, states, facts)
    finally:
        env.close()


def physics_rate(task: str, backend: str, steps: int = 400) -> float:
    """Raw physics steps/s of the task's scene with the arm held (the backend's ``step`` alone)."""
    env = make_task_env(task, backend=backend)
    try:
        env.reset(seed=0)
        env.scene.robot.hold()
        start = time.perf_counter()
        env.backend.step(steps)
        return steps / (time.perf_counter() - start)
    finally:
        env.close()


def judge_verdicts(task: str, backend: str, states: list[Any]) -> dict[str, list[str]]:
    """Each judge's verdict on every state, evaluated in ``backend``'s env of the task."""
    env = make_task_env(task, backend=backend)
    try:
        env.reset(seed=0)
        context = task_context(env, task)
        return {spec: [s.verdict for s in judge_states(make_judge(spec), env, context, states)]
                for spec in JUDGES}
    finally:
        env.close()


def solution_outcome(task: str, backend: str, seed: int) -> str:
    """Execute the task's reference solution on ``backend``; its outcome status."""
    from simjudge.skills.executor import execute_solution

    solution = Path(__file__).resolve().parents[1] / "tasks" / "library" / "solutions" / f"{task}.yaml"
    if not solution.is_file():
        return "-"
    previous = os.environ.get("SIMJUDGE_BACKEND")
    os.environ["SIMJUDGE_BACKEND"] = backend  # the executor builds its env with the default
    try:
        with tempfile.TemporaryDirectory() as out:
            outcome = execute_solution(solution, out, seed=seed, reward_solver="oracle", video=False,
                                       resume=False)
        return "ok" if outcome.task_success else str(outcome.verdict)
    finally:
        if previous is None:
            os.environ.pop("SIMJUDGE_BACKEND", None)
        else:
            os.environ["SIMJUDGE_BACKEND"] = previous


def main() -> None:
    """Run every backend on every task and print the side-by-side table and summary lines."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backends", nargs="+", default=available_backends())
    parser.add_argument("--tasks", nargs="+", default=["all"])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--solutions", action="store_true", help="also execute the reference solutions")
    args = parser.parse_args()
    tasks = library_ids() if args.tasks == ["all"] else args.tasks
    backends = [b for b in args.backends if b != "pybullet"]
    backends = ["pybullet", *backends]  # pybullet first: the reference for agreement
    episodes: dict[tuple[str, str], Episode] = {}
    rates: dict[str, list[float]] = {b: [] for b in backends}
    agreement: dict[str, dict[str, list[bool]]] = {b: {j: [] for j in JUDGES} for b in backends}
    solutions: dict[tuple[str, str], str] = {}
    wall = time.perf_counter()
    for task in tqdm(tasks, desc="tasks"):
        reference: dict[str, list[str]] = {}
        for backend in backends:  # interleaved per task: load hits every backend alike
            episodes[task, backend] = episode = oracle_episode(task, backend, args.seed)
            if task == tasks[0] or len(rates[backend]) < 5:
                rates[backend].append(physics_rate(task, backend))
            verdicts = judge_verdicts(task, backend, episodes[task, "pybullet"].states)
            if backend == "pybullet":
                reference = verdicts
            for spec in JUDGES:
                agreement[backend][spec] += [a == b for a, b in zip(verdicts[spec], reference[spec], strict=True)]
            if args.solutions:
                solutions[task, backend] = solution_outcome(task, backend, args.seed)
            del episode
    wall = time.perf_counter() - wall
    _print_report(tasks, backends, episodes, rates, agreement, solutions, wall)


def _print_report(tasks, backends, episodes, rates, agreement, solutions, wall) -> None:
    print(f"\n{len(tasks)} tasks, backends {backends}, wall {wall:.0f} s\n")
    print(f"{'task':26s} " + " ".join(f"{b:>22s}" for b in backends))
    for task in tasks:
        cells = []
        for backend in backends:
            e = episodes[task, backend]
            extra = f" sol:{solutions[task, backend]}" if (task, backend) in solutions else ""
            cells.append(f"{('OK' if e.success else '--')} Φ{e.final_phi:4.2f} {e.steps:4d}st{extra}")
        print(f"{task:26s} " + " ".join(f"{c:>22s}" for c in cells))
    print()
    head = ("backend", "success", "final Φ", "steps", "ctrl steps/s", "physics steps/s")
    print(" ".join(f"{h:>16s}" for h in head))
    control: dict[str, float] = {}
    for backend in backends:
        eps = [episodes[t, backend] for t in tasks]
        control[backend] = sum(e.steps for e in eps) / max(sum(e.env_seconds for e in eps), 1e-9)
        row = (backend, f"{sum(e.success for e in eps)}/{len(eps)}",
               f"{statistics.mean(e.final_phi for e in eps):.3f}", f"{statistics.mean(e.steps for e in eps):.1f}",
               f"{control[backend]:,.0f}", f"{statistics.median(rates[backend]):,.0f}")
        print(" ".join(f"{c:>16s}" for c in row))
    print("\njudge verdict agreement with pybullet (pybullet oracle states restored in each backend):")
    print(" ".join(f"{h:>26s}" for h in ("judge", *backends)))
    for spec in JUDGES:
        cells = [f"{100.0 * np.mean(agreement[b][spec]):.1f}%" for b in backends]
        print(" ".join(f"{c:>26s}" for c in (spec, *cells)))
    solved = [t for t in tasks if episodes[t, "pybullet"].success]
    for backend in backends[1:]:
        kept = sum(episodes[t, backend].success for t in solved)
        print(f"{backend}: solves {kept}/{len(solved)} of the tasks the oracle solves on pybullet "
              f"({100.0 * kept / max(len(solved), 1):.0f} %)")
    for backend in backends[1:]:
        lost = [t for t in solved if not episodes[t, backend].success]
        for task in lost:
            facts = episodes[task, backend].facts
            shown = {k: v for k, v in facts.items() if k not in ("elapsed_steps",)}
            print(f"  {backend}: {task} fails where pybullet succeeds; end facts {shown}")
    if solutions:
        for backend in backends:
            ok = sum(solutions[t, backend] == "ok" for t in tasks if (t, backend) in solutions)
            total = sum(solutions[t, backend] != "-" for t in tasks if (t, backend) in solutions)
            print(f"reference solutions on {backend}: {ok}/{total} verified successes")
    print()
    reference_rate = control["pybullet"]
    for backend in backends:
        eps = [episodes[t, backend] for t in tasks]
        successes = sum(e.success for e in eps)
        print(f"{backend}: oracle_success {successes}/{len(eps)} steps_per_s {control[backend]:.0f} "
              f"ratio_vs_pybullet {control[backend] / reference_rate:.2f}")


if __name__ == "__main__":
    main()
