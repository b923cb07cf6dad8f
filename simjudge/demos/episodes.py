"""One recorded demonstration episode: what ``simjudge demos record`` keeps per step.

:func:`record_episode` runs a policy on a (randomized) task env from ``reset(seed)`` and keeps,
for every step ``t``, the observation *before* the action (the robot's state, the scene's
state, an exterior camera frame), the env action executed, Φ of the observed state
(``info["progress"]``) and whether the env reported success after the action. The episode
knows its task, seed and world, so it replays: the same seed resets into the same world, and
the recorded actions drive it to the same end (:func:`replay_actions`).

The state vector is split as LeRobot datasets split it: ``observation.state`` is the robot
(suction point position and quaternion, 7 arm joints, suction on/off: 15 numbers on every
task) and ``observation.environment_state`` the rest of simjudge's flat state (the object's
pose, bounding box, joints and links; its length depends on the task).

Example:
    >>> from simjudge.demos.episodes import record_episode
    >>> from simjudge.policies import make_policy
    >>> ep = record_episode("PressButton-v0", make_policy("oracle"), seed=0, image_size=0)
    >>> ep.success, ep.actions.shape[1], ep.state.shape[1], len(ep.progress) == ep.length
    (True, 7, 15, True)
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from simjudge.policies import Policy, PolicyError
from simjudge.policies.base import action_width, as_chunk
from simjudge.policies.observe import exterior_camera, observe, to_env_action
from simjudge.policies.rollout import policy_task
from simjudge.tasks.spec import load_task, make_task_env

__all__ = ["ROBOT_STATE_DIM", "Episode", "frame_rate", "record_episode", "replay_actions", "task_prompt"]

ROBOT_STATE_DIM = 15
"""Numbers of simjudge's flat state that describe the robot (eef pos 3, quat 4, arm 7, suction 1)."""


@dataclass
class Episode:
    """A recorded episode (arrays over its ``length`` steps).

    Attributes:
        task: Built-in task id (``PressButton-v0``).
        prompt: The task's instruction (its description).
        seed: The reset seed: the world and the start state.
        state: ``float32 (T, 15)`` robot state before each action.
        environment_state: ``float32 (T, D)`` the rest of the state vector.
        actions: ``float32 (T, 7)`` the env's ``delta-translation`` actions executed.
        progress: ``float32 (T,)`` Φ of the state before each action.
        next_success: ``bool (T,)`` the env's success after each action.
        images: ``uint8 (T, H, W, 3)`` exterior frames before each action, or None.
        success: Verified success at the end (the env's goal check on the final state).
        final_progress: Φ of the final state.
        policy: The policy spec that acted.
        world: The randomized world sample of the seed.
    """

    task: str
    prompt: str
    seed: int
    state: np.ndarray
    environment_state: np.ndarray
    actions: np.ndarray
    progress: np.ndarray
    next_success: np.ndarray
    images: np.ndarray | None
    success: bool
    final_progress: float
    policy: str = ""
    world: dict[str, Any] = field(default_factory=dict)

    @property
    def length(self) -> int:
        """Steps (frames) in the episode."""
        return int(self.actions.shape[0])

    def meta(self) -> dict[str, Any]:
        """JSON-ready facts of the episode (no arrays)."""
        return {"task": self.task, "prompt": self.prompt, "seed": self.seed, "length": self.length,
                "success": self.success, "final_progress": self.final_progress,
                "policy": self.policy, "world": self.world}

    def save_npz(self, path: str | Path) -> Path:
        """Write the arrays and the facts to one ``.npz`` (atomically: temp file, rename)."""
        import json

        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp.npz")
        arrays: dict[str, Any] = {"state": self.state, "environment_state": self.environment_state,
                  "actions": self.actions, "progress": self.progress, "next_success": self.next_success}
        if self.images is not None:
            arrays["images"] = self.images
        np.savez_compressed(tmp, meta=np.array(json.dumps(self.meta(), default=float)), **arrays)
        tmp.replace(path)
        return path

    @classmethod
    def load_npz(cls, path: str | Path) -> Episode:
        """Read an episode written by :meth:`save_npz`."""
        import json

        with np.load(path) as data:
            meta = json.loads(str(data["meta"]))
            images = data["images"] if "images" in data.files else None
            return cls(task=meta["task"], prompt=meta["prompt"], seed=int(meta["seed"]),
                       state=data["state"], environment_state=data["environment_state"],
                       actions=data["actions"], progress=data["progress"],
                       next_success=data["next_success"], images=images,
                       success=bool(meta["success"]), final_progress=float(meta["final_progress"]),
                       policy=str(meta.get("policy", "")), world=dict(meta.get("world", {})))


def task_prompt(task: str) -> str:
    """The instruction of a built-in task (its description, else its name)."""
    spec = load_task(task)
    return spec.description or spec.name


def frame_rate(env: Any) -> float:
    """Control steps per second of a SimEnv (its ``frameskip`` physics steps per action)."""
    from simjudge.envs.world import PHYSICS_TIMESTEP

    return 1.0 / (env.frameskip * PHYSICS_TIMESTEP)


def record_episode(task: str, policy: Policy, seed: int, *, image_size: int = 64,
                   env: Any = None) -> Episode:
    """Run ``policy`` on ``task`` (randomized world of ``seed``) and record every step.

    Args:
        task: Built-in task id.
        policy: Any policy acting in ``delta-translation`` or ``cartesian_position`` (its
            actions are recorded as the env's ``delta-translation`` actions they became).
        seed: Env and policy seed.
        image_size: Side of the square exterior frames; 0 records no frames.
        env: A task env to reuse (made and closed here when None).

    Raises:
        PolicyError: A joint-space policy (its actions are not the env's 7-D deltas).
    """
    space = policy.info.action_space
    if space not in ("delta-translation", "cartesian_position"):
        raise PolicyError(f"demos record the env's 7-D delta actions; policy {policy.info.name!r} acts in "
                          f"{space!r}: record a delta-translation or cartesian_position policy")
    own = env is None
    env = make_task_env(task) if own else env
    try:
        return _record(task, policy, seed, image_size, env)
    finally:
        if own:
            env.close()


def _record(task: str, policy: Policy, seed: int, image_size: int, env: Any) -> Episode:
    base: Any = env.unwrapped
    obs, info = env.reset(seed=seed)
    prompt = task_prompt(task)
    ptask = policy_task(env, policy, prompt)
    policy.reset(ptask, seed)
    states, actions, progress, nexts, images = [], [], [], [], []
    pending: deque[np.ndarray] = deque()
    space, done = policy.info.action_space, False
    phi = float(info.get("progress", 0.0))
    with base.using_action_mode("delta_ee"):
        while not done:
            states.append(np.asarray(obs, dtype=np.float32))
            progress.append(phi)
            if image_size:
                images.append(base.backend.render(exterior_camera(base, (image_size, image_size))).rgb)
            if not pending:
                observation = observe(base, obs, policy.info, prompt)
                pending.extend(as_chunk(policy.act(observation), policy.info.name, action_width(space)))
            action = np.asarray(to_env_action(pending.popleft(), space, base), dtype=np.float32)
            obs, _, terminated, truncated, info = env.step(action)
            actions.append(action)
            phi = float(info.get("progress", 0.0))
            nexts.append(bool(info.get("success", False)))
            done = bool(terminated or truncated)
    flat = np.stack(states)
    return Episode(task=task, prompt=prompt, seed=int(seed), state=flat[:, :ROBOT_STATE_DIM].copy(),
                   environment_state=flat[:, ROBOT_STATE_DIM:].copy(), actions=np.stack(actions),
                   progress=np.asarray(progress, np.float32), next_success=np.asarray(nexts, bool),
                   images=np.stack(images) if images else None, success=bool(info.get("success", False)),
                   final_progress=phi, policy=policy.info.spec or policy.info.name,
                   world=dict(getattr(base, "world_sample", None) or {}))


def replay_actions(task: str, seed: int, actions: np.ndarray) -> tuple[bool, list[float]]:
    """Replay recorded ``delta-translation`` actions from ``reset(seed)`` and judge the end.

    Stops early when the env ends (success ends an episode). Returns the verified success
    (the env's goal check on the final state) and Φ per state (reset state first).
    """
    env = make_task_env(task)
    try:
        _, info = env.reset(seed=int(seed))
        phis = [float(info.get("progress", 0.0))]
        success = bool(info.get("success", False))
        base: Any = env.unwrapped
        with base.using_action_mode("delta_ee"):
            for action in np.asarray(actions, dtype=np.float32):
                _, _, terminated, truncated, info = env.step(action)
                phis.append(float(info.get("progress", 0.0)))
                success = bool(info.get("success", False))
                if terminated or truncated:
                    break
        return success, phis
    finally:
        env.close()
