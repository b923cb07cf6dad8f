"""Recorded judge rollouts: wrapper stacks driven by seeded actions, and what they output.

Why: the lean judged step (fast paths, lazy signals, batch OPD) must not change anything
judges see or report. :func:`run_scenario` drives one wrapper stack over seeded random actions
and returns everything the stack reports (rewards, flags, the judge wrappers' info keys and
the episode files). The golden outputs under ``tests/fixtures/judge_rollouts/`` were written
by ``python tests/judges/rollout_scenarios.py`` with the per-step implementation (before the
fast path existed); ``test_lean_step.py`` replays the same actions now and compares.

To re-record them after a change of the *env* (physics, task files), run this script against
the reference judges of commit 8f83faa, e.g. a tree with ``simjudge/judges`` from
``git archive 8f83faa judges`` and every other subpackage linked to the working copy, on
``PYTHONPATH`` (the test skips, saying so, when the env no longer reproduces the recorded
observations).

Only the wall time in ``judge_stats`` (``observe_seconds``) and the library ``versions`` are
left out of the comparison: they are measurements, not outputs.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from simjudge.judges import (
    CodeRewardJudge,
    CodeSuccessJudge,
    JudgePanel,
    JudgeRecord,
    JudgeReward,
    JudgeVerify,
    make_judge,
)
from simjudge.judges.signals import to_jsonable
from simjudge.skills.scripted import ScriptedPolicy
from simjudge.tasks.spec import make_task_env

GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "judge_rollouts"
TASK = "OpenDrawer-v0"
HORIZON = 20

SUCCESS_CODE = (
    'angle = get_joint_state(self, "StorageFurniture", "joint_0")\n'
    'low, high = get_joint_limit(self, "StorageFurniture", "joint_0")\n'
    "success = angle >= low + 0.4 * (high - low)\n"
)
EASY_SUCCESS_CODE = (
    'pos = get_position(self, "StorageFurniture")\n'
    "success = get_eef_pos(self)[0][2] < pos[2] + 0.40\n"
)
REWARD_CODE = (
    "def _compute_reward(self):\n"
    "    eef = get_eef_pos(self)[0]\n"
    '    handle = get_link_state(self, "StorageFurniture", "link_1")\n'
    "    distance = np.linalg.norm(eef - handle)\n"
    "    return -distance, distance < 0.02\n"
)
BROKEN_CODE = "success = 1 / 0\n"


def _panel() -> JudgePanel:
    return JudgePanel([CodeSuccessJudge(SUCCESS_CODE), make_judge("privileged")])


def _mixed_panel() -> JudgePanel:
    return JudgePanel(
        {
            "easy": CodeSuccessJudge(EASY_SUCCESS_CODE),
            "truth": make_judge("privileged"),
            "reward": CodeRewardJudge(REWARD_CODE),
            "noisy": make_judge("noisy:sigma=0.05,seed=1"),
        },
        weights=[1.0, 2.0, 0.5, 1.0],
        vote="any",
    )


def _broken_panel() -> JudgePanel:
    return JudgePanel(
        [CodeSuccessJudge(BROKEN_CODE), make_judge("quantized:levels=4")], vote="majority"
    )


def _stack(env: Any, judge: Any, folder: Path, reward: dict[str, Any], verify: dict[str, Any]):
    return JudgeRecord(
        JudgeVerify(JudgeReward(env, judge, **reward), judge, **verify), judge, folder=folder
    )


SCENARIOS: dict[str, Callable[[Any, Path], Any]] = {
    "bench-panel": lambda env, folder: JudgeRecord(env, _panel(), folder=folder),
    "privileged-stack": lambda env, folder: _stack(
        env, make_judge("privileged"), folder, {"mode": "dense"}, {}
    ),
    "normalized-privileged": lambda env, folder: _stack(
        env, make_judge("privileged"), folder, {"mode": "normalized", "gamma": 0.9}, {}
    ),
    "mixed-panel-sparse": lambda env, folder: _stack(
        env, _mixed_panel(), folder, {"mode": "sparse", "combine": "add"}, {}
    ),
    "broken-code": lambda env, folder: _stack(
        env, _broken_panel(), folder, {"mode": "dense"}, {"terminate_on_failure": False}
    ),
    "oracle-privileged": lambda env, folder: _stack(
        env, make_judge("privileged"), folder, {"mode": "dense"}, {}
    ),
    "oracle-panel-every-step": lambda env, folder: _stack(
        env, _mixed_panel(), folder, {"mode": "normalized", "max_reward": 4.0}, {"key": "v"}
    ),
    "code-reward": lambda env, folder: _stack(
        env,
        CodeRewardJudge(REWARD_CODE),
        folder,
        {"mode": "dense", "combine": "add"},
        {"terminate_on_failure": False},
    ),
}

_WRAPPER_KEYS = ("judge_reward", "judge", "v", "is_success", "judge_record")


def _actions(seed: int, count: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    actions = rng.uniform(-1, 1, size=(count, 7)).astype(np.float32)
    actions[:, 2] = rng.uniform(-1.0, 0.2, size=count)  # mostly downwards: touch things
    return actions


def run_scenario(name: str, folder: Path) -> dict[str, Any]:
    """Run scenario ``name`` (episodes files into ``folder``); return everything it reports.

    Three episodes: two that run to their end (seeds 3 and 4) and one cut short by
    ``close()`` after 5 steps (seed 5).
    """
    oracle = name.startswith("oracle")
    env = SCENARIOS[name](make_task_env(TASK, horizon=60 if oracle else HORIZON), folder)
    steps: list[dict[str, Any]] = []
    for episode, seed in enumerate((3, 4, 5)):
        obs, info = env.reset(seed=seed)
        steps.append({"reset": seed, "info": {k: info[k] for k in _WRAPPER_KEYS if k in info}})
        limit = 5 if episode == 2 else env.unwrapped.horizon + 1
        policy = ScriptedPolicy(env.unwrapped, noise=0.1, seed=seed) if oracle else None
        for t, action in enumerate(_actions(seed, limit)):
            if policy is not None:
                action = np.asarray(policy(obs), dtype=np.float32)
            obs, reward, terminated, truncated, info = env.step(action)
            steps.append(
                {
                    "t": t,
                    "obs": obs,
                    "reward": reward,
                    "terminated": terminated,
                    "truncated": truncated,
                    "info": {k: info[k] for k in _WRAPPER_KEYS if k in info},
                }
            )
            if terminated or truncated:
                break
    env.close()
    episodes = {}
    for path in sorted(folder.glob("episode_*.json")):
        data = json.loads(path.read_text())
        data["judge_stats"].pop("observe_seconds")
        data.pop("versions")
        episodes[path.name] = data
    outputs = to_jsonable({"steps": steps, "episodes": episodes})
    for row in outputs["steps"]:
        record = row["info"].get("judge_record")
        if record and record.get("path"):
            record["path"] = Path(record["path"]).name
    return outputs


def main() -> None:
    """Write the golden outputs of every scenario (run with the reference implementation)."""
    import tempfile

    GOLDEN.mkdir(parents=True, exist_ok=True)
    for name in SCENARIOS:
        with tempfile.TemporaryDirectory() as tmp:
            outputs = run_scenario(name, Path(tmp))
        (GOLDEN / f"{name}.json").write_text(json.dumps(outputs, indent=0, sort_keys=True) + "\n")
        print(name, len(outputs["steps"]), "steps", len(outputs["episodes"]), "episodes")


if __name__ == "__main__":
    sys.exit(main())
