"""SAC on reference reward subtasks: env steps and wall time to reach the success threshold.

For each task, the reference solution's (``tasks/library/solutions/<EnvId>.yaml``)
primitive prefix is executed once with the motion-planning primitives (seed 0);
its end state (the part already held by suction) is the start state of the
solution's first reward subtask. SAC (:func:`simjudge.skills.sac.train_sac`,
default MLP 256×256×256 unless ``--net`` says otherwise) then learns that subtask
for each seed until the evaluation success rate reaches the threshold or the
budget ends. Target: ≤ 50k env steps for ≥ 4 of 5 seeds (RoboGen trains 1M steps).

Prints one row per (task, seed) and a per-task summary; ``--json`` also writes the
rows. Seeds run in ``--jobs`` parallel processes (torch uses one thread each).

``--reward`` chooses what SAC is trained on (success is always measured the same way: the
evaluation episodes' success output of the reference reward code, threshold 0.8):

* ``code`` (default): the reference reward code (:func:`simjudge.skills.sac.train_sac`);
* ``privileged`` / ``obs-progress`` / ``image-progress`` (any registered potential judge; one
  that reads frames gets the subtask env's rendered frame every step): only
  ``JudgeReward(judge)`` (dense: Φ_t + γΦ_t − Φ_{t−1}), the judge reading the task
  description; the training env does not end on success (a judge-only learner is never told
  it succeeded), only at the horizon or on a physics error.

Issue 10's target: SAC through ``JudgeReward(obs-progress)`` reaches the threshold on
≥ 4/5 seeds within 2× the steps ``privileged`` needs.

``--reward`` takes several values (e.g. ``--reward privileged obs-progress``); the summary then
also prints, per task, each later reward's median steps to threshold ÷ the first reward's (over
the seeds that succeed) and k/n seeds for each. ``--eval-every`` sets the evaluation interval
(default 1000 env steps; steps to threshold are only known to that resolution).

Usage: ``python bench/sac_subtask.py [--tasks OpenDrawer-v0 ...] [--seeds 5] [--first-seed 0]
[--budget 50000] [--jobs 2] [--net 256,256,256] [--eval-every 1000]
[--reward code|privileged|obs-progress ...] [--json out.json]``
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import statistics
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import gymnasium as gym

from simjudge.skills.executor import execute_solution
from simjudge.skills.run_files import load_subtask
from simjudge.skills.sac import SACConfig, train_sac
from simjudge.skills.subtask_env import SubtaskSpec, make_subtask_env
from simjudge.tasks.spec import RunDir, load_solution

TASKS = ("OpenDrawer-v0", "TurnSafeDial-v0", "OpenBoxLid-v0")
"""Pull a grasped drawer open, turn a grasped dial, lift a grasped lid."""

BENCH_CONFIG = SACConfig(
    net_arch=(256, 256, 256),
    learning_rate=3e-4,
    batch_size=256,
    learning_starts=1_000,
    train_freq=1,
    gradient_steps=1,
    gamma=0.95,
    eval_freq=1_000,
    n_eval_episodes=5,
    success_threshold=0.8,
    progress_bar=False,
)


def reward_subtask_spec(task: str, seed: int = 0) -> SubtaskSpec:
    """The task's first reward subtask, started where its primitive prefix ends."""
    solution = load_solution(task)
    index = next(i for i, s in enumerate(solution.subtasks) if s.kind == "reward")
    with tempfile.TemporaryDirectory() as tmp:
        summary = execute_solution(solution.prefix(index), tmp, seed=seed, video=False)
        if not all(summary.subtask_success):
            reasons = [v.reason for v in summary.verdicts if not v.success]
            raise RuntimeError(f"{task}: the primitive prefix failed: {reasons}")
        _, start = load_subtask(RunDir(tmp), index - 1)
    subtask = solution.subtasks[index]
    return SubtaskSpec(
        scene=solution.scene.model_dump(mode="json", by_alias=True),
        reward_code=subtask.code,
        start_state=start.to_dict(),
        action_space=subtask.action_space,
        name=subtask.name,
        task=solution.task,
        scene_seed=seed,
    )


class JudgedSubtaskEnv(gym.Env):
    """A reward subtask's env whose episodes end only at the horizon or on a physics error.

    The reward code still runs (its success output is in ``info["is_success"]``) but ends
    nothing; ``view`` is the inner SimEnv's state view, which the judge wrappers read.
    """

    def __init__(self, spec_data: dict, render_mode: str | None = None) -> None:
        self.inner = make_subtask_env(spec_data, render_mode=render_mode)
        self.render_mode = render_mode
        self.observation_space = self.inner.observation_space
        self.action_space = self.inner.action_space

    @property
    def view(self) -> Any:
        """The inner SimEnv's state view."""
        return self.inner.sim.view

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Restore the subtask's start state."""
        return self.inner.reset(seed=seed, options=options)

    def step(self, action):
        """Step the subtask env; success no longer terminates."""
        obs, reward, _, truncated, info = self.inner.step(action)
        return obs, reward, bool(info.get("physics_error")), truncated, info

    def render(self):
        """The inner env's frame (``render_mode="rgb_array"``: for judges that read images)."""
        return self.inner.render()

    def close(self) -> None:
        """Close the inner env."""
        self.inner.close()


def train_judge_sac(task: str, spec_data: dict, config: SACConfig, judge_spec: str) -> Any:
    """SAC on ``JudgeReward(make_judge(judge_spec))`` only; success measured as ``code``."""
    import torch
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.utils import set_random_seed
    from stable_baselines3.common.vec_env import DummyVecEnv

    from simjudge.judges import JudgeReward, make_judge
    from simjudge.pipelines.judge_bench import task_context
    from simjudge.skills.sac import EarlyStopOnSuccess, _result, make_sac
    from simjudge.skills.subtask_env import SubtaskEnv
    from simjudge.tasks.spec import make_task_env

    torch.set_num_threads(1)
    start = time.perf_counter()
    task_env = make_task_env(task)
    context = task_context(task_env, task)
    task_env.close()
    spec = SubtaskSpec.from_dict(spec_data)

    def make() -> gym.Env:
        judge = make_judge(judge_spec)
        render_mode = "rgb_array" if judge.needs_frames else None  # image judges read frames
        env = JudgeReward(JudgedSubtaskEnv(spec_data, render_mode), judge, context=context,
                          gamma=config.gamma)
        return Monitor(env)

    set_random_seed(config.seed)
    vec = DummyVecEnv([make])
    vec.seed(config.seed)
    eval_env = SubtaskEnv(spec)
    stopper = EarlyStopOnSuccess(eval_env, config.eval_freq, config.n_eval_episodes,
                                 config.success_threshold, seed=config.seed,
                                 noise=config.eval_noise)
    try:
        model = make_sac(vec, config)
        model.learn(config.total_steps, callback=stopper)
        if stopper.steps_to_success is None and (
                not stopper.history or stopper.history[-1].step != model.num_timesteps):
            stopper.evaluate()
    finally:
        vec.close()
        eval_env.close()
    return _result(model, stopper, spec, config, start, None)


def _run(args: tuple[str, dict, int, dict, str]) -> dict:
    task, spec_data, seed, config_data, reward = args
    config = replace(SACConfig(**config_data), seed=seed)
    if reward == "code":
        result = train_sac(SubtaskSpec.from_dict(spec_data), config)
    else:
        result = train_judge_sac(task, spec_data, config, reward)
    return {
        "task": task,
        "reward": reward,
        "seed": seed,
        "success": result.success,
        "steps_to_success": result.steps_to_success,
        "env_steps": result.env_steps,
        "wall_time_s": round(result.wall_time_s, 1),
        "best_success_rate": result.best_success_rate,
        "reason": result.reason,
        "before_learning": passed_before_learning(result.steps_to_success, config.learning_starts),
    }


def passed_before_learning(steps_to_success: int | None, learning_starts: int) -> bool:
    """Whether the threshold was reached before SAC's first gradient step.

    Until ``learning_starts`` env steps SAC only collects random actions, so an evaluation
    that passes by then judged the untrained actor: the subtask was passed without learning
    and says nothing about the reward it was trained on.
    """
    return steps_to_success is not None and steps_to_success <= learning_starts


HEADER = f"{'task':18s} {'reward':>12s} {'seed':>4s} {'success':>7s} {'steps':>8s} {'wall s':>8s}  best rate"


def _row(r: dict) -> str:
    steps = r["steps_to_success"] if r["success"] else f">{r['env_steps']}"
    if r.get("before_learning"):
        steps = f"{steps}*"  # passed by the untrained actor (see the summary)
    return (
        f"{r['task']:18s} {r['reward']:>12s} {r['seed']:4d} {str(r['success']):>7s} {steps!s:>8s} "
        f"{r['wall_time_s']:8.1f}  {r['best_success_rate']:.2f}"
    )


def _succeeded(rows: list[dict], budget: int) -> list[dict]:
    return [r for r in rows if r["success"] and r["steps_to_success"] <= budget]


def _by_reward(rows: list[dict]) -> dict[str, list[dict]]:
    """Rows grouped by reward, in the order the rewards first appear."""
    groups: dict[str, list[dict]] = {}
    for r in rows:
        groups.setdefault(r["reward"], []).append(r)
    return groups


def _summary(rows: list[dict], budget: int, seeds: int) -> None:
    for task in dict.fromkeys(r["task"] for r in rows):
        task_rows = [r for r in rows if r["task"] == task]
        for reward, mine in _by_reward(task_rows).items():
            ok = _succeeded(mine, budget)
            steps = [r["steps_to_success"] for r in ok]
            med = f"median {statistics.median(steps):,.0f} steps" if steps else "no success"
            wall = statistics.median(r["wall_time_s"] for r in mine)
            verdict = "meets" if len(ok) >= max(1, round(0.8 * seeds)) else "MISSES"
            print(
                f"{task:18s} {reward:>12s} {len(ok)}/{len(mine)} seeds ≤ {budget:,} steps ({med}, "
                f"median wall {wall:.0f} s): {verdict} the target (≥ 4/5 seeds ≤ 50k steps)"
            )
        _ratios(task_rows, budget)
        untrained = [r for r in task_rows if r.get("before_learning")]
        if untrained:
            which = ", ".join(f"{r['reward']} seed {r['seed']}" for r in untrained)
            print(
                f"{task:18s} * {len(untrained)}/{len(task_rows)} runs passed before learning started "
                f"({which}): the untrained actor already reaches the threshold there, so those "
                "runs do not tell the rewards apart"
            )


def step_ratios(rows: list[dict], budget: int) -> dict[str, float | None]:
    """Each later reward's median steps to threshold ÷ the first reward's (succeeding seeds).

    Args:
        rows: One task's rows; the first reward in them is the reference.
        budget: Successes after this many env steps do not count.

    Returns:
        Reward → ratio, None where either reward never succeeded.
    """
    medians: dict[str, float | None] = {}
    for reward, mine in _by_reward(rows).items():
        steps = [r["steps_to_success"] for r in _succeeded(mine, budget)]
        medians[reward] = statistics.median(steps) if steps else None
    first, *later = medians
    base = medians[first]
    return {w: (m / base if (m := medians[w]) is not None and base else None) for w in later}


def _ratios(rows: list[dict], budget: int) -> None:
    groups = _by_reward(rows)
    k = {w: len(_succeeded(g, budget)) for w, g in groups.items()}
    n = {w: len(g) for w, g in groups.items()}
    first = next(iter(groups))
    for reward, ratio in step_ratios(rows, budget).items():
        text = f"{ratio:.2f}" if ratio is not None else "n/a"
        verdict = ("meets" if ratio is not None and ratio <= 2.0 and k[reward] >= 0.8 * n[reward]
                   else "MISSES")
        print(
            f"{rows[0]['task']:18s} median steps {reward} ÷ {first} = {text} "
            f"({reward} {k[reward]}/{n[reward]}, {first} {k[first]}/{n[first]}): "
            f"{verdict} issue 10's target (≥ 4/5 seeds, ratio ≤ 2)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tasks", nargs="+", default=list(TASKS))
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--reward", nargs="+", default=["code"],
                        help="code (the reference reward) or a potential judge: privileged, "
                             "obs-progress, ...")
    parser.add_argument("--budget", type=int, default=50_000)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--eval-every", type=int, default=BENCH_CONFIG.eval_freq,
                        help="env steps between evaluations (the resolution of steps to success)")
    parser.add_argument("--net", default="256,256,256", help="hidden layers, e.g. 256,256,256")
    parser.add_argument("--json", default=None, help="also write the rows to this file")
    args = parser.parse_args()
    net = tuple(int(x) for x in args.net.split(","))
    config = replace(BENCH_CONFIG, total_steps=args.budget, net_arch=net,
                     eval_freq=args.eval_every)
    print(
        f"SAC config: net {list(net)}, lr {config.learning_rate}, batch {config.batch_size}, "
        f"learning_starts {config.learning_starts}, train_freq {config.train_freq}, "
        f"gradient_steps {config.gradient_steps}, gamma {config.gamma}, eval every "
        f"{config.eval_freq} steps on {config.n_eval_episodes} episodes, threshold "
        f"{config.success_threshold}; budget {args.budget:,} env steps; {args.jobs} jobs; "
        f"reward {', '.join(args.reward)}"
    )
    start = time.perf_counter()
    specs = {task: reward_subtask_spec(task).to_dict() for task in args.tasks}
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    work = [(t, specs[t], seed, asdict(config), reward)
            for t in args.tasks for seed in seeds for reward in args.reward]  # paired
    spawn = multiprocessing.get_context("spawn")  # no fork after torch was imported
    rows = []
    print(HEADER, flush=True)
    with ProcessPoolExecutor(max_workers=args.jobs, mp_context=spawn) as pool:
        for row in pool.map(_run, work):  # in order, printed as soon as available
            rows.append(row)
            print(_row(row), flush=True)
    print()
    _summary(rows, args.budget, args.seeds)
    print(f"total wall time {time.perf_counter() - start:.0f} s")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
