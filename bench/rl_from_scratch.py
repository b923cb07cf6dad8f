"""RL from scratch on the judge's dense reward vs the sparse success reward (issue 38).

For each task, reward and seed, SB3 (SAC, or PPO with a few envs) learns the *whole* task
from the reset state (no grasp given, the world randomized per episode) on

- ``dense``: ``JudgeReward(env, privileged, mode="dense")`` — the staged Φ as the term plus
  potential-based shaping;
- ``sparse``: ``JudgeReward(env, privileged, mode="sparse")`` — +1 on success only;

and training episodes do **not** end on success (ManiSkill's ``ignore_terminations``): the
env ends an episode on success, and with a per-step Φ term that makes hovering near the part
(Φ ≈ 0.3-0.4 for the rest of the horizon) worth more than finishing (Φ = 1 once), so a dense
learner is taught to avoid the goal; when success is absorbing, staying in it pays Φ = 1 per
step and is the best thing to do (the same for the sparse reward's +1). Every ``--eval-every`` env
steps the deterministic policy runs ``--eval-episodes`` randomized episodes on held-out
seeds, scored by the env's own ``info["success"]`` (the task goal on simulator state, not the
reward being learned). ``steps_to_0.8`` is the env steps at the first evaluation with a
success rate >= 0.8. Prints per run one line, then per task and reward

    <task> <reward> steps_to_0.8: N        (median over the seeds that reached it)
    <task> <reward> steps_to_0.8: not reached in N

and writes ``results/rl_from_scratch.json`` (every curve, wall time, load, versions) and a
learning-curve PNG. Runs are resumable: each finished run is kept in ``--work`` and skipped
when the bench is started again. Torch uses one thread per process; ``--jobs`` processes run
at once.

    python bench/rl_from_scratch.py [--algo sac|ppo] [--tasks T ...] [--seeds 3]
        [--budget 200000] [--eval-every 5000] [--eval-episodes 20] [--jobs 2]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from results import load, write_result  # noqa: E402

TASKS = ("PressButton-v0", "PressLampButton-v0", "PressMicrowaveButton-v0", "PressDispenser-v0",
         "CloseDrawer-v0", "CloseDoor-v0")
"""Six single-stage built-in tasks (the press and close tasks need no grasp)."""
REWARDS = ("dense", "sparse")
THRESHOLD = 0.8
EVAL_SEED = 100_000
"""Evaluation episodes use seeds from here on (training resets draw their own)."""


def make_env(task: str, reward: str, horizon: int | None):
    import gymnasium as gym

    from simjudge.judges import JudgeReward, make_judge
    from simjudge.tasks.spec import make_task_env

    class SuccessAbsorbs(gym.Wrapper):
        """Training episodes go on after success (a physics failure still ends them)."""

        def step(self, action):
            obs, reward, terminated, truncated, info = self.env.step(action)
            if terminated and info.get("success") and not info.get("fail"):
                terminated = False
            return obs, reward, terminated, truncated, info

    kwargs = {"info_mode": "minimal"}
    if horizon:
        kwargs["horizon"] = horizon
    return JudgeReward(SuccessAbsorbs(make_task_env(task, **kwargs)), make_judge("privileged"),
                       mode=reward)


def evaluate(model: Any, task: str, episodes: int, horizon: int | None) -> float:
    """Success rate of the deterministic policy on held-out randomized worlds."""
    from simjudge.tasks.spec import make_task_env

    env = make_task_env(task, info_mode="minimal", **({"horizon": horizon} if horizon else {}))
    wins = 0
    for k in range(episodes):
        obs, info = env.reset(seed=EVAL_SEED + k)
        done = False
        while not done:
            action, _ = model.predict(obs, deterministic=True)
            obs, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated or bool(info.get("success"))
        wins += bool(info.get("success"))
    env.close()
    return wins / episodes


def train_one(task: str, reward: str, seed: int, algo: str, budget: int, eval_every: int,
              eval_episodes: int, horizon: int | None) -> dict[str, Any]:
    """One run; returns its curve (env steps, success rate) and steps_to_0.8."""
    import torch
    from stable_baselines3 import PPO, SAC
    from stable_baselines3.common.vec_env import DummyVecEnv

    torch.set_num_threads(1)
    started = time.perf_counter()
    if algo == "ppo":
        venv = DummyVecEnv([lambda: make_env(task, reward, horizon) for _ in range(4)])
        venv.seed(seed)
        model: Any = PPO("MlpPolicy", venv, n_steps=256, batch_size=256, seed=seed, verbose=0,
                         policy_kwargs={"net_arch": [128, 128]})
    else:
        env = make_env(task, reward, horizon)
        env.reset(seed=seed)
        model = SAC("MlpPolicy", env, learning_starts=1000, seed=seed, verbose=0,
                    policy_kwargs={"net_arch": [256, 256]})
    curve: list[tuple[int, float]] = []
    reached: int | None = None
    while model.num_timesteps < budget:
        model.learn(total_timesteps=eval_every, reset_num_timesteps=False)
        rate = evaluate(model, task, eval_episodes, horizon)
        curve.append((int(model.num_timesteps), rate))
        if rate >= THRESHOLD and reached is None:
            reached = int(model.num_timesteps)
            break
    return {"task": task, "reward": reward, "seed": seed, "algo": algo, "curve": curve,
            "steps_to_threshold": reached, "steps": int(model.num_timesteps),
            "wall_s": time.perf_counter() - started}


def _run(args: tuple[Any, ...], work: Path) -> dict[str, Any]:
    task, reward, seed, algo = args[:4]
    path = work / f"{algo}_{task}_{reward}_s{seed}.json"
    if path.exists():
        return json.loads(path.read_text())
    row = train_one(*args)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(row))
    tmp.replace(path)
    return row


def summary_lines(rows: list[dict[str, Any]], budget: int) -> list[str]:
    """``<task> <reward> steps_to_0.8: N`` (median of the seeds that reached it) per pair."""
    lines = []
    for task in dict.fromkeys(r["task"] for r in rows):
        for reward in dict.fromkeys(r["reward"] for r in rows):
            runs = [r for r in rows if r["task"] == task and r["reward"] == reward]
            if not runs:
                continue
            hits = [r["steps_to_threshold"] for r in runs if r["steps_to_threshold"] is not None]
            if len(hits) * 2 > len(runs):  # the median over all seeds is finite
                value = str(int(statistics.median(
                    [h if h is not None else budget * 10 for h in
                     (r["steps_to_threshold"] for r in runs)])))
                lines.append(f"{task} {reward} steps_to_{THRESHOLD}: {value} "
                             f"({len(hits)}/{len(runs)} seeds)")
            else:
                lines.append(f"{task} {reward} steps_to_{THRESHOLD}: not reached in {budget} "
                             f"({len(hits)}/{len(runs)} seeds)")
    return lines


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    """Learning curves: one panel per task, success rate vs env steps, a line per run."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tasks = list(dict.fromkeys(r["task"] for r in rows))
    fig, axes = plt.subplots(1, len(tasks), figsize=(3.2 * len(tasks), 2.8), squeeze=False)
    colours = {"dense": "tab:blue", "sparse": "tab:orange"}
    for ax, task in zip(axes[0], tasks, strict=True):
        for r in rows:
            if r["task"] != task or not r["curve"]:
                continue
            steps, rates = zip(*r["curve"], strict=True)
            ax.plot(steps, rates, color=colours.get(r["reward"], "grey"), alpha=0.8,
                    label=r["reward"] if r["seed"] == min(x["seed"] for x in rows) else None)
        ax.axhline(THRESHOLD, color="grey", lw=0.8, ls=":")
        ax.set_title(task.removesuffix("-v0"), fontsize=9)
        ax.set_xlabel("env steps")
        ax.set_ylim(-0.05, 1.05)
    axes[0][0].set_ylabel("success rate")
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--algo", choices=("sac", "ppo"), default="sac")
    parser.add_argument("--tasks", nargs="+", default=list(TASKS))
    parser.add_argument("--rewards", nargs="+", choices=REWARDS, default=list(REWARDS))
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--budget", type=int, default=200_000)
    parser.add_argument("--eval-every", type=int, default=5_000)
    parser.add_argument("--eval-episodes", type=int, default=20)
    parser.add_argument("--horizon", type=int, default=None, help="episode length (task's)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--work", type=Path, default=ROOT / "runs" / "rl_from_scratch")
    parser.add_argument("--out", type=Path, default=None, help="result JSON (results/...)")
    parser.add_argument("--plot", type=Path, default=ROOT / "docs" / "images" /
                        "rl_from_scratch.png")
    args = parser.parse_args(argv)
    before = load()
    started = time.perf_counter()
    runs = [(t, r, s, args.algo, args.budget, args.eval_every, args.eval_episodes, args.horizon)
            for t in args.tasks for r in args.rewards for s in range(args.seeds)]
    work = args.work / f"{args.algo}_b{args.budget}_e{args.eval_every}x{args.eval_episodes}"
    rows: list[dict[str, Any]] = []
    with ProcessPoolExecutor(args.jobs) as pool:
        for row in pool.map(_run, runs, [work] * len(runs)):
            rows.append(row)
            hit = row["steps_to_threshold"]
            print(f"  {row['task']} {row['reward']} seed {row['seed']}: "
                  f"{'reached at ' + str(hit) if hit else 'not reached'} after {row['steps']} "
                  f"steps, {row['wall_s']:.0f} s", flush=True)
    lines = summary_lines(rows, args.budget)
    for line in lines:
        print(line)
    wall = time.perf_counter() - started
    print(f"wall {wall:.0f} s; load before {before}, after {load()}")
    plot(rows, args.plot)
    settings = {"algo": args.algo, "tasks": args.tasks, "rewards": args.rewards,
                "seeds": args.seeds, "budget": args.budget, "eval_every": args.eval_every,
                "eval_episodes": args.eval_episodes, "horizon": args.horizon, "jobs": args.jobs,
                "threshold": THRESHOLD}
    written = write_result(f"rl_from_scratch_{args.algo}",
                           {"lines": lines, "runs": rows, "wall_s": wall}, settings, before,
                           out=args.out)
    print(f"wrote {written} and {args.plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
