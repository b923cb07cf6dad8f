"""The env a reward subtask is learned in: a SimEnv started from the subtask's start state.

Why a separate env: a RoboGen/VERGSA reward subtask is not the task. It starts
where the previous subtask ended (usually with the part already held), its reward
and success come from the generated ``_compute_reward`` (compiled by
:mod:`simjudge.envs.codegen`, reading the env's read-only
:class:`~simjudge.envs.state_api.StateView`), and its episodes last ``horizon``
steps counted from that start. A :class:`SubtaskSpec` holds everything needed to
rebuild the env in another process or years later (plain JSON), so a learned
policy is always stored together with it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import gymnasium as gym
import numpy as np

from simjudge.envs.codegen import CompiledReward, GeneratedCodeError, compile_once
from simjudge.envs.sim_env import SimEnv
from simjudge.envs.sim_state import SimState
from simjudge.envs.state_api import STATE_API
from simjudge.tasks.spec.task import task_randomization

__all__ = [
    "EvalResult",
    "PolicyRollout",
    "SubtaskEnv",
    "SubtaskSpec",
    "evaluate_policy",
    "make_subtask_env",
    "rollout_policy",
]

_UNBOUNDED_HORIZON = 2**31 - 1
"""Horizon given to the inner SimEnv: the subtask env counts its own steps."""


@dataclass(frozen=True)
class SubtaskSpec:
    """Everything that defines a reward subtask's env (JSON-serialisable).

    Attributes:
        scene: Scene config as a plain dict (``SceneConfig.model_dump(mode="json")``).
        reward_code: Source of ``def _compute_reward(self): ... return reward, success``.
        start_state: :meth:`SimState.to_dict` of the start state; None = the settled scene.
        action_space: ``delta-translation`` or ``normalized-direct-translation``.
        name: Subtask name (for logs and the skill library).
        task: Task name the subtask belongs to (informational).
        horizon: Steps per episode, counted from the start state (VERGSA: 100).
        frameskip: Physics steps per action (VERGSA: 2).
        scene_seed: Seed the scene is built with (fixes free placements).
        control_suction: Expose the suction channel as a 7th action; by default the
            action is 6-D (translation + rotation) and suction keeps its start value,
            as in VERGSA, so a learned policy cannot drop what the previous subtask grasped.
    """

    scene: dict[str, Any]
    reward_code: str
    start_state: dict[str, Any] | None = None
    action_space: str = "delta-translation"
    name: str = ""
    task: str = ""
    horizon: int = 100
    frameskip: int = 2
    scene_seed: int = 0
    control_suction: bool = False

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SubtaskSpec:
        """Inverse of :meth:`to_dict`; unknown keys are an error naming them."""
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown SubtaskSpec keys {unknown}; valid keys are {sorted(known)}")
        return cls(**data)

    def with_start(self, state: SimState | dict[str, Any] | None) -> SubtaskSpec:
        """The same spec started from another state."""
        data = state.to_dict() if isinstance(state, SimState) else state
        return replace(self, start_state=data)

    def digest(self) -> str:
        """Short content hash (scene, code, start state, settings): an id for caches."""
        text = json.dumps(self.to_dict(), sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:12]


class SubtaskEnv(gym.Env):
    """A reward subtask as a Gymnasium env (the env SAC learns in).

    ``reset()`` restores :attr:`SubtaskSpec.start_state`; ``step()`` applies the
    action to the inner :class:`SimEnv` and calls the compiled reward on its state
    view. ``terminated`` when the reward's success output holds (or the physics
    fails or the reward code fails), ``truncated`` after ``horizon`` steps.

    **Action** ``Box(-1, 1, (6,))``: translation (per ``action_space``) and delta
    rotation, suction held at its start value; ``(7,)`` with ``control_suction``.

    **Observation** the inner env's flat ``state`` vector (see :class:`SimEnv`).

    **Info keys** (every step): ``is_success`` (bool, SB3's success key),
    ``subtask_reward`` (float), ``physics_error`` (bool), ``elapsed_steps`` (int,
    steps since the start state), and when the reward code
    failed ``reward_error`` (dict with ``type`` and ``message``; the step's reward
    is 0 and the episode terminates).

    Args:
        spec: The subtask.
        render_mode: ``"rgb_array"`` or None.
        sim: Run on this existing env instead of building one (the executor's
            live env); it must have been built from ``spec.scene`` with ``spec.scene_seed``.
        reward: A compiled reward to reuse; compiled from ``spec.reward_code`` if None.
        backend: Backend name when the env is built here.
        info_mode: ``info_mode`` of the env built here (``minimal`` for training: this env
            reads only ``physics_error`` from it, so its own info is the same either way).
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 25}

    def __init__(
        self,
        spec: SubtaskSpec,
        render_mode: str | None = None,
        sim: SimEnv | None = None,
        reward: CompiledReward | None = None,
        backend: str = "pybullet",
        info_mode: str = "full",
    ) -> None:
        self.spec_data = spec
        self.reward_fn = (
            reward if reward is not None else compile_once("reward", spec.reward_code, STATE_API)
        )
        self._owns_sim = sim is None
        if sim is None:
            sim = SimEnv(
                spec.scene,
                backend=backend,
                reward_mode="none",
                translation_mode=spec.action_space,
                horizon=_UNBOUNDED_HORIZON,
                frameskip=spec.frameskip,
                render_mode=render_mode,
                scene_seed=spec.scene_seed,
                task_name=spec.task,
                info_mode=info_mode,
                # a built-in task's scene: the world of scene_seed, as the executor's env
                randomization=task_randomization(spec.task, spec.scene),
            )
        elif sim.frameskip != spec.frameskip:
            raise ValueError(
                f"the given sim env uses frameskip={sim.frameskip}; the subtask needs "
                f"{spec.frameskip}. Build the env with it (or let SubtaskEnv build its own)"
            )
        self.sim = sim
        self.render_mode = sim.render_mode
        self.start_state = SimState.from_dict(spec.start_state) if spec.start_state else None
        self.horizon = int(spec.horizon)
        self.observation_space = sim.observation_space
        n = 7 if spec.control_suction else 6
        self.action_space = gym.spaces.Box(-1.0, 1.0, shape=(n,), dtype=np.float32)
        self._suction = 1.0
        self.steps = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Restore the start state (``options["state"]`` overrides it)."""
        super().reset(seed=seed)
        state = (options or {}).get("state", self.start_state)
        obs, info = self.sim.reset(options={"state": state} if state is not None else None)
        suction_on = self.sim.scene.robot.suction_on
        self._suction = 1.0 if suction_on else -1.0
        self.steps = 0
        return obs, self._subtask_info(info, 0.0, False)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """One env step; reward and success from the compiled reward function."""
        action = np.asarray(action, dtype=np.float64).reshape(-1)
        full = action if action.size == 7 else np.append(action[:6], self._suction)
        obs, _, _, _, info = self.sim.step_in_mode(full, self.spec_data.action_space)
        self.steps += 1
        error: dict[str, str] | None = None
        try:
            reward, success = self.reward_fn(self.sim.view)
        except GeneratedCodeError as exc:
            reward, success = 0.0, False
            error = {"type": type(exc).__name__, "message": str(exc)}
        physics_error = bool(info.get("physics_error", False))
        success = success and not physics_error
        out = self._subtask_info(info, reward, success)
        if error is not None:
            out["reward_error"] = error
        terminated = success or physics_error or error is not None
        truncated = self.steps >= self.horizon
        return obs, float(reward), bool(terminated), bool(truncated), out

    def _subtask_info(self, info: dict[str, Any], reward: float, success: bool) -> dict[str, Any]:
        return {
            "is_success": bool(success),
            "subtask_reward": float(reward),
            "physics_error": bool(info.get("physics_error", False)),
            "elapsed_steps": self.steps,
        }

    def evaluate_reward(self) -> tuple[float, bool]:
        """The reward function on the current state (raises its typed error)."""
        return self.reward_fn(self.sim.view)

    def get_state(self) -> SimState:
        """The inner env's state."""
        return self.sim.get_state()

    def render(self):
        """RGB frame of the inner env."""
        return self.sim.render()

    def close(self) -> None:
        """Close the inner env if this env built it."""
        if self._owns_sim:
            self.sim.close()


def make_subtask_env(
    spec: SubtaskSpec | dict[str, Any], render_mode: str | None = None
) -> SubtaskEnv:
    """Build a :class:`SubtaskEnv` (picklable entry point for vectorised envs).

    Its inner env has ``info_mode="minimal"`` (training needs no state summary per step).
    """
    if isinstance(spec, dict):
        spec = SubtaskSpec.from_dict(spec)
    return SubtaskEnv(spec, render_mode=render_mode, info_mode="minimal")


@dataclass
class EvalResult:
    """One evaluation.

    Attributes:
        step: Env steps trained when evaluated.
        success_rate: Share of successful episodes.
        mean_return: Mean episode return.
        deterministic_success: Whether the noise-free episode succeeded.
        lengths: Episode lengths.
        error: ``{"type", "message"}`` if the reward code failed, else None.
    """

    step: int
    success_rate: float
    mean_return: float
    deterministic_success: bool
    lengths: list[int] = field(default_factory=list)
    error: dict[str, str] | None = None

    def key(self) -> tuple[float, bool, float]:
        """Ordering of models: success rate, then noise-free success, then return."""
        return (self.success_rate, self.deterministic_success, self.mean_return)


@dataclass
class PolicyRollout:
    """One episode of a policy from the subtask's start state.

    Attributes:
        success: The reward's success output held at the end.
        steps: Env steps.
        total_reward: Sum of rewards.
        actions: Actions taken, ``(steps, action_dim)``.
        end_state: :class:`~simjudge.envs.sim_state.SimState` at the end.
        frames: Rendered frames (reset frame first) when rendering.
        error: The reward error, if any.
    """

    success: bool
    steps: int
    total_reward: float
    actions: np.ndarray
    end_state: Any
    frames: list[np.ndarray] = field(default_factory=list)
    error: dict[str, str] | None = None


def rollout_policy(
    policy: Any,
    env: SubtaskEnv,
    *,
    deterministic: bool = True,
    noise: float = 0.0,
    seed: int = 0,
    render: bool = False,
) -> PolicyRollout:
    """Run one episode of ``policy`` from the env's start state.

    ``policy`` is an SB3 model (``predict(obs, deterministic)``) or any callable
    ``policy(obs) -> action``.
    """
    predict = getattr(policy, "predict", None)
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    frames = [env.render()] if render else []
    actions, total, done = [], 0.0, False
    info: dict[str, Any] = {"is_success": False}
    while not done:
        if predict is not None:
            action, _ = predict(obs, deterministic=deterministic)
        else:
            action = np.asarray(policy(obs), dtype=np.float32)
        if noise > 0.0:
            action = np.clip(action + rng.normal(0.0, noise, action.shape), -1.0, 1.0)
        actions.append(np.asarray(action, dtype=np.float32))
        obs, reward, terminated, truncated, info = env.step(action)
        total += float(reward)
        done = terminated or truncated
        if render:
            frames.append(env.render())
    return PolicyRollout(
        success=bool(info["is_success"]),
        steps=len(actions),
        total_reward=total,
        actions=np.asarray(actions, dtype=np.float32).reshape(len(actions), -1),
        end_state=env.get_state(),
        frames=frames,
        error=info.get("reward_error"),
    )


def evaluate_policy(
    policy: Any,
    env: SubtaskEnv,
    n_episodes: int,
    *,
    step: int = 0,
    seed: int = 0,
    noise: float = 0.1,
) -> EvalResult:
    """Evaluate ``policy``: episode 0 noise-free, episodes ``k ≥ 1`` with seeded noise."""
    runs = []
    for k in range(max(1, n_episodes)):
        run = rollout_policy(policy, env, noise=noise if k else 0.0, seed=seed + k)
        runs.append(run)
        if run.error is not None:
            break
    return EvalResult(
        step=step,
        success_rate=float(np.mean([r.success for r in runs])),
        mean_return=float(np.mean([r.total_reward for r in runs])),
        deterministic_success=runs[0].success,
        lengths=[r.steps for r in runs],
        error=next((r.error for r in runs if r.error is not None), None),
    )
