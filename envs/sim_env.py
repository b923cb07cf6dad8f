"""``SimEnv``: the articulated-manipulation Gymnasium environment.

The env owns a physics backend (the physics knows nothing about tasks), builds
a :class:`~simjudge.envs.scene.SceneConfig` into it and, optionally, evaluates a
:class:`~simjudge.envs.goals.Goal`. Subtasks chain through
:meth:`SimEnv.get_state` / :meth:`SimEnv.set_state` (or ``reset(options={"state": s})``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from .action_modes import EXTRA_ACTION_MODES, extra_action_space, step_extra_mode
from .backends import Backend, CameraSpec, default_backend, make_backend
from .goals import MAX_DENSE_REWARD, Goal
from .observation import ObservationBuilder
from .randomization import Randomization, WorldSample, WorldVariation
from .scene import SceneConfig
from .scene_builder import BuiltScene, build_scene
from .sim_state import SimState, capture_state, restore_state
from .state_api import StateView
from .world import PHYSICS_TIMESTEP

__all__ = [
    "SUPPORTED_ACTION_MODES",
    "SUPPORTED_OBS_MODES",
    "SUPPORTED_REWARD_MODES",
    "SUPPORTED_TRANSLATION_MODES",
    "SimEnv",
]

SUPPORTED_OBS_MODES: tuple[str, ...] = ("state", "state_dict")
SUPPORTED_REWARD_MODES: tuple[str, ...] = ("dense", "normalized_dense", "sparse", "none")
SUPPORTED_TRANSLATION_MODES: tuple[str, ...] = ("delta-translation", "normalized-direct-translation")
SUPPORTED_RENDER_MODES: tuple[str, ...] = ("rgb_array",)
SUPPORTED_INFO_MODES: tuple[str, ...] = ("full", "minimal")
MINIMAL_INFO_KEYS: tuple[str, ...] = ("success", "fail", "progress", "elapsed_steps", "physics_error")
"""The keys of ``info`` with ``info_mode="minimal"`` (training, vector envs)."""
SUPPORTED_ACTION_MODES: tuple[str, ...] = ("delta_ee", "joint_position", *EXTRA_ACTION_MODES)
"""``delta_ee``: the 7-D end-effector action below; ``joint_position``: 7 arm joint targets
(rad) + a suction scalar (> 0.5 = on), driven by the backend's joint position control;
``cartesian_position``: an absolute suction-point target (:mod:`.action_modes`)."""

WORKSPACE_LOW = np.array([-0.35, -0.55, 0.0])
"""Lower corner of the box that ``normalized-direct-translation`` maps [-1, 1]^3 onto."""
WORKSPACE_HIGH = np.array([0.45, 0.55, 0.8])
"""Upper corner of that box."""
_WORKSPACE_LOW = WORKSPACE_LOW.tolist()
_WORKSPACE_SIZE = (WORKSPACE_HIGH - WORKSPACE_LOW).tolist()


def _check_mode(name: str, value: str, supported: tuple[str, ...]) -> None:
    if value not in supported:
        raise ValueError(f"{name}={value!r} is not supported; use one of {list(supported)}")


class SimEnv(gym.Env):
    """A Panda with suction facing articulated objects on a table.

    **Action** ``Box(-1, 1, (7,))``: ``[0:3]`` translation — in
    ``delta-translation`` mode a displacement of up to ``max_translation`` m of
    the suction point, in ``normalized-direct-translation`` mode a target inside
    :data:`WORKSPACE_LOW`..:data:`WORKSPACE_HIGH`; ``[3:6]`` delta axis-angle
    rotation in the gripper frame, up to ``max_rotation_deg`` per step; ``[6]``
    suction on (> 0) or off. The target pose goes through IK to joint position
    control; each action lasts ``frameskip`` physics steps of 0.01 s.

    **Observation** (``obs_mode="state"``) a flat ``float32`` vector whose layout
    is :attr:`observation_layout` (name -> slice): ``eef_pos`` (3, m),
    ``eef_quat`` (4), ``arm_qpos`` (7, rad), ``suction`` (1, 0/1), then for each
    object ``<name>/pos`` (3), ``<name>/quat`` (4), ``<name>/aabb_min`` (3),
    ``<name>/aabb_max`` (3), ``<name>/joints`` (one per movable joint, rad or
    m) and ``<name>/links`` (3 per non-base link: link frame positions).
    ``obs_mode="state_dict"`` returns the same pieces as a ``Dict`` space.

    **Info** every step: ``elapsed_steps``, ``success``, ``fail``, the goal's
    named facts (e.g. ``is_grasped``, ``joint_fraction``), ``progress`` (the
    privileged Φ), ``physics_error``, ``suction_lost`` (the weld was overloaded
    and let go this step) and ``state`` (a privileged summary:
    ``eef_pos``, ``suction``, ``grasped``, ``joints``).

    **Reward** ``dense`` = 5·Φ (max :data:`~simjudge.envs.goals.MAX_DENSE_REWARD`),
    ``normalized_dense`` = Φ, ``sparse`` = success, ``none`` = 0. ``terminated``
    is success or fail; ``truncated`` when ``horizon`` steps elapse.

    Args:
        scene: Scene config (object, dict, or YAML path / text).
        goal: Optional task goal (success facts, progress, reward).
        backend: Backend name (``pybullet``, ``mujoco``, ``sapien``) or instance; None =
            :func:`~simjudge.envs.backends.default_backend` (``$SIMJUDGE_BACKEND``, else pybullet).
        obs_mode: One of :data:`SUPPORTED_OBS_MODES`.
        reward_mode: One of :data:`SUPPORTED_REWARD_MODES`.
        translation_mode: One of :data:`SUPPORTED_TRANSLATION_MODES`.
        horizon: Steps before truncation (RoboGen/VERGSA: 100).
        frameskip: Physics steps per action (2).
        max_translation: Largest displacement per step in delta mode (m).
        max_rotation_deg: Largest rotation per step (degrees, ≤ 5 as RoboGen).
        render_mode: ``"rgb_array"`` or None.
        camera: Camera name from the scene config to render (first by default).
        scene_seed: Fix the scene layout; None = derive it from ``reset(seed=...)``.
        task_name: Name recorded in ``info`` and episode records.
        info_mode: ``full`` (everything above) or ``minimal``: only
            :data:`MINIMAL_INFO_KEYS`, for training and vector envs, which pay per key (and
            per nested key) to merge infos every step; judges that read the goal's named
            facts from ``info`` then compute them themselves.
        action_mode: ``delta_ee`` (the action above) or ``joint_position``: the action is
            ``Box(lower, upper, (8,))``, 7 arm joint targets within the joint limits plus a
            suction value in [0, 1] (> 0.5 = on); see :meth:`step_joint_position`.
        randomization: Per-seed world variation (:mod:`~simjudge.envs.randomization`; task
            envs get their task's); None = the fixed start of ``scene``. Each reset draws a
            world seed from ``np_random`` (so ``reset(seed=s)`` always gives the same world,
            later ``reset()`` calls new ones; ``scene_seed`` fixes it) and records the sample
            as :attr:`world_sample` and in the reset ``info["world_sample"]``.
    """

    metadata = {"render_modes": list(SUPPORTED_RENDER_MODES), "render_fps": 25}

    def __init__(
        self,
        scene: SceneConfig | dict | str | Path,
        goal: Goal | None = None,
        backend: str | Backend | None = None,
        obs_mode: str = "state",
        reward_mode: str = "dense",
        translation_mode: str = "delta-translation",
        horizon: int = 100,
        frameskip: int = 2,
        max_translation: float = 0.03,
        max_rotation_deg: float = 5.0,
        render_mode: str | None = None,
        camera: str | None = None,
        scene_seed: int | None = None,
        task_name: str = "",
        info_mode: str = "full",
        action_mode: str = "delta_ee",
        randomization: Randomization | None = None,
    ) -> None:
        _check_mode("obs_mode", obs_mode, SUPPORTED_OBS_MODES)
        _check_mode("info_mode", info_mode, SUPPORTED_INFO_MODES)
        self.info_mode = info_mode
        _check_mode("reward_mode", reward_mode, SUPPORTED_REWARD_MODES)
        _check_mode("translation_mode", translation_mode, SUPPORTED_TRANSLATION_MODES)
        if render_mode is not None:
            _check_mode("render_mode", render_mode, SUPPORTED_RENDER_MODES)
        if horizon < 1 or frameskip < 1:
            raise ValueError(f"horizon and frameskip must be ≥ 1, got {horizon} and {frameskip}")
        if not 0 < max_rotation_deg <= 5.0:
            raise ValueError(f"max_rotation_deg must be in (0, 5], got {max_rotation_deg}")
        self.scene_config = _as_scene_config(scene)
        self.goal = goal
        self.obs_mode = obs_mode
        self.reward_mode = reward_mode
        self.translation_mode = translation_mode
        self.horizon = int(horizon)
        self.frameskip = int(frameskip)
        self.max_translation = float(max_translation)
        self.max_rotation = math.radians(max_rotation_deg)
        self.render_mode = render_mode
        self.task_name = task_name
        self.scene_seed = scene_seed
        if backend is None or isinstance(backend, str):
            backend = make_backend(backend or default_backend(), timestep=PHYSICS_TIMESTEP)
        self.backend = backend
        self._world: WorldSample | None = None
        self.world_sample: dict[str, Any] | None = None
        """The world of the current episode (:meth:`WorldSample.to_dict`); None without randomization."""
        self._camera_name = camera
        self._camera = self._pick_camera(camera)
        self.scene: BuiltScene = build_scene(self.backend, self.scene_config, scene_seed or 0)
        self.randomization = randomization
        self._variation = None if randomization is None else WorldVariation(self.scene, randomization)
        self.view = StateView(self.scene)
        self._obs = ObservationBuilder(self.backend, self.scene)
        self.observation_layout = self._obs.layout
        self.observation_space = self._obs.space(obs_mode)
        _check_mode("action_mode", action_mode, SUPPORTED_ACTION_MODES)
        self.action_mode = action_mode
        self.action_space = self._action_space_of(action_mode)
        self.elapsed_steps = 0
        self._physics_error = False
        self._suction_lost = False
        self._bound_goal: tuple[Any, StateView, Callable[[], dict[str, Any]]] | None = None
        self._step_observers: list[Callable[[], None]] = []
        self._observers_muted = 0

    # ----------------------------------------------------------------------------
    def _pick_camera(self, name: str | None) -> CameraSpec:
        cams = {c.name: c for c in self.scene_config.cameras}
        if name is not None and name not in cams:
            raise ValueError(f"camera {name!r} is not in the scene; cameras are {list(cams)}")
        cfg = cams[name] if name else self.scene_config.cameras[0]
        eye, target = (cfg.eye, cfg.target) if self._world is None else self._world.jitter_camera(cfg)
        return CameraSpec(cfg.name, eye, target, fov=cfg.fov, width=cfg.width, height=cfg.height)

    def _rebuild_if_needed(self, seed: int | None) -> None:
        if seed is None or self.scene_seed is not None or not self.scene_config.is_randomized:
            return
        if seed != self.scene.seed:
            self.backend.remove_state(self.scene.initial_state)
            self.scene = build_scene(self.backend, self.scene_config, seed)
            self.view = StateView(self.scene)
            self._obs = ObservationBuilder(self.backend, self.scene)
            if self.randomization is not None:
                self._variation = WorldVariation(self.scene, self.randomization)

    def _vary_world(self) -> None:
        """Draw this episode's world (if randomized) and move the scene there."""
        if self._variation is None:
            return
        if self.scene_seed is not None:  # the world reset(seed=scene_seed) draws
            world_seed = int(np.random.default_rng(self.scene_seed).integers(2**63 - 1))
        else:
            world_seed = int(self.np_random.integers(2**63 - 1))
        self._enter_world(world_seed)

    def _enter_world(self, world_seed: int) -> None:
        assert self._variation is not None, "only a randomized env enters worlds"
        if self._world is not None and self._world.world_seed == world_seed:
            return  # already there: restoring the settled snapshot re-enters it
        self._world = self._variation.reset(world_seed)
        self.world_sample = self._world.to_dict()
        self._camera = self._pick_camera(self._camera_name)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Restore the settled initial scene (or ``options["state"]``, a :class:`SimState`).

        With a randomization the scene first moves to a newly drawn world (also when a state
        is given: the state then sets the bodies and joints, the world its camera and the
        goal's initial values).
        """
        super().reset(seed=seed)
        self._rebuild_if_needed(seed)
        self._vary_world()
        self._bound_goal = None  # a goal with memory (SequenceGoal) starts a new episode
        options = options or {}
        state = options.get("state")
        if state is not None:
            self.set_state(state if isinstance(state, SimState) else SimState.from_dict(state))
        else:
            restore_state(self.scene, None)
            self.elapsed_steps = 0
        self._physics_error = False
        self._suction_lost = False
        obs = self._obs.observe(self.obs_mode)
        info = self.get_info()
        if self._world is not None and self.info_mode == "full":
            info["world_sample"] = self._world.to_dict()  # a fresh copy for every reset
        return obs, info

    def step(self, action):
        """Apply one action for ``frameskip`` physics steps."""
        if self.action_mode == "joint_position":
            return self.step_joint_position(action)
        if self.action_mode != "delta_ee":
            return step_extra_mode(self, action)
        return self._step(action, self.translation_mode)

    def _action_space_of(self, action_mode: str) -> gym.spaces.Box:
        if action_mode in EXTRA_ACTION_MODES:
            return extra_action_space(self, action_mode)
        if action_mode == "joint_position":
            robot = self.scene.robot
            low = np.append(robot.lower, 0.0).astype(np.float32)
            high = np.append(robot.upper, 1.0).astype(np.float32)
            return gym.spaces.Box(low, high, dtype=np.float32)
        return gym.spaces.Box(-1.0, 1.0, shape=(7,), dtype=np.float32)

    @contextlib.contextmanager
    def using_action_mode(self, action_mode: str) -> Iterator[None]:
        """Inside the block :meth:`step` reads actions in ``action_mode`` (space included).

        For a runner whose policy acts in joint positions on an env (possibly wrapped by
        judges that see every :meth:`step`) built for ``delta_ee`` actions.

        Raises:
            ValueError: ``action_mode`` is not one of :data:`SUPPORTED_ACTION_MODES`.
        """
        _check_mode("action_mode", action_mode, SUPPORTED_ACTION_MODES)
        saved = self.action_mode, self.action_space
        self.action_mode, self.action_space = action_mode, self._action_space_of(action_mode)
        try:
            yield
        finally:
            self.action_mode, self.action_space = saved

    def step_joint_position(self, action):
        """One step towards arm joint targets: ``action`` = 7 joint angles (rad) + suction.

        The targets are clipped to the joint limits and go straight to the backend's joint
        position control (no IK); suction turns on when ``action[7] > 0.5``, off otherwise.

        Raises:
            ValueError: ``action`` is not 8 finite numbers.
        """
        a = np.asarray(action, dtype=np.float64)
        if a.shape != (8,) or not np.all(np.isfinite(a)):
            raise ValueError(
                f"a joint_position action is 8 finite numbers (7 joint targets in rad, then "
                f"suction in [0, 1]); got shape {a.shape}: {a}"
            )
        robot = self.scene.robot
        robot.command(np.clip(a[:7], robot.lower, robot.upper))
        if a[7] > 0.5 and not robot.suction_on:
            robot.activate_suction(self.scene.static_bodies)
        elif a[7] <= 0.5 and robot.suction_on:
            robot.release()
        return self._advance_and_observe()

    def step_in_mode(self, action, translation_mode: str):
        """Like :meth:`step`, reading the action's translation in ``translation_mode``.

        For rollouts whose action space differs from the env's own (a subtask learned in
        ``normalized-direct-translation`` on an env built for delta actions): the mode is an
        argument of the call, and the env's ``translation_mode`` is left as it is.

        Raises:
            ValueError: ``translation_mode`` is not one of
                :data:`SUPPORTED_TRANSLATION_MODES`.
        """
        _check_mode("translation_mode", translation_mode, SUPPORTED_TRANSLATION_MODES)
        return self._step(action, translation_mode)

    def _step(self, action, translation_mode: str):
        # np.clip on plain floats (NaN stays NaN, ±inf saturate), minus numpy's overhead
        if type(action) is np.ndarray and action.shape == (7,) and action.dtype.kind == "f":
            values = action.tolist()  # exact: float32 and float64 both widen to Python floats
        else:
            values = np.asarray(action, dtype=np.float64).reshape(7).tolist()
        a = [-1.0 if x < -1.0 else 1.0 if x > 1.0 else x for x in values]
        total = sum(a)
        if total != total:  # NaN: the only non-finite value left after clipping
            raise ValueError(
                f"action contains non-finite values: {np.array(a)}; actions must be finite"
            )
        self._apply_action(a, translation_mode)
        return self._advance_and_observe()

    def _advance_and_observe(self):
        """After the arm was commanded: one control step, then obs, reward, flags, info."""
        self._suction_lost = self.advance()
        obs = self._obs.observe(self.obs_mode)
        if not self._obs.last_is_finite():
            self._physics_error = True
            obs = self._obs.zeros(self.obs_mode)
        info = self.get_info()
        reward = self._reward(info)
        terminated = bool(info["success"] or info["fail"])
        truncated = self.elapsed_steps >= self.horizon
        return obs, reward, terminated, truncated, info

    def step_physics(self) -> None:
        """Advance physics by one control step (``frameskip`` physics steps), recorded."""
        log = self.scene.robot.command_log
        if log is not None:
            log.append(["step", [self.frameskip]])
        self.backend.step(self.frameskip)

    def advance(self) -> bool:
        """One control step after the arm has been commanded, under the env's suction rules.

        Physics advances by ``frameskip`` steps; then an overloaded weld lets go and suction
        that is on grips whatever came into reach; the step is counted. :meth:`step` and the
        motion-planning primitives both move the world through here.

        Returns:
            Whether suction let go of an overloaded part during this step.
        """
        self.step_physics()
        robot = self.scene.robot
        lost = robot.break_overloaded_suction()
        if robot.suction_on and robot.attachment is None:
            robot.activate_suction(self.scene.static_bodies)
        self.elapsed_steps += 1
        if self._step_observers and not self._observers_muted:
            for observer in tuple(self._step_observers):
                observer()
        return lost

    @contextlib.contextmanager
    def observe_steps(self, observer: Callable[[], None]) -> Iterator[None]:
        """Call ``observer()`` after every control step executed inside the block.

        Every way the world moves forward goes through :meth:`advance` (:meth:`step`, the
        motion-planning primitives, policies rolled out over wrappers), so an observer sees
        each executed step, whoever drives the env: the executor hangs judges and joint
        trackers here. Steps taken inside :meth:`unobserved` (planning look-ahead that is
        undone) are not reported. The observer reads the world through :attr:`view`.
        """
        self._step_observers.append(observer)
        try:
            yield
        finally:
            self._step_observers.remove(observer)

    @contextlib.contextmanager
    def unobserved(self) -> Iterator[None]:
        """Steps taken inside the block are not reported to :meth:`observe_steps` observers.

        For look-ahead that is rolled back with :meth:`set_state` (sampling MPC): what an
        observer sees is the trajectory that was executed, not the ones that were imagined.
        """
        self._observers_muted += 1
        try:
            yield
        finally:
            self._observers_muted -= 1

    @contextlib.contextmanager
    def record_commands(self) -> Iterator[list[list[Any]]]:
        """Record every robot command and physics step issued inside the block.

        The recording hook the executor uses to store a planned skill so that it replays
        exactly (:func:`simjudge.skills.library.replay_commands`): each event is
        ``[name, args]`` with ``name`` one of ``command``, ``activate_suction``, ``attach``,
        ``release``, ``break_overloaded_suction`` or ``step``.

        Yields:
            The list the events are appended to.

        Raises:
            RuntimeError: A recording is already active on this env.
        """
        robot = self.scene.robot
        if robot.command_log is not None:
            raise RuntimeError("commands are already being recorded on this env; nest no recordings")
        log: list[list[Any]] = []
        robot.command_log = log
        try:
            yield log
        finally:
            robot.command_log = None

    def _apply_action(self, a: list[float], translation_mode: str) -> None:
        """Command the arm and suction for a clipped action."""
        robot = self.scene.robot
        state = robot.read_state()  # one read serves the targets and the IK
        _, pos, orn = state
        # plain floats, same operations in the same order as the numpy expressions
        # ``pos + action[:3] * max_translation`` and the workspace map
        if translation_mode == "delta-translation":
            step = self.max_translation
            target = [p + x * step for p, x in zip(pos, a[:3], strict=True)]
        else:
            target = [
                lo + (x + 1.0) / 2.0 * size
                for lo, x, size in zip(_WORKSPACE_LOW, a[:3], _WORKSPACE_SIZE, strict=True)
            ]
        turn = self.max_rotation
        target_orn = _turn(orn, [a[3] * turn, a[4] * turn, a[5] * turn])
        robot.command(robot._differential_ik(state, target, target_orn))
        if a[6] > 0.0 and not robot.suction_on:
            robot.activate_suction(self.scene.static_bodies)
        elif a[6] <= 0.0 and robot.suction_on:
            robot.release()

    # task facts -------------------------------------------------------------------
    def evaluate(self) -> dict[str, Any]:
        """Success facts: ``success``, ``fail`` and the goal's named predicates."""
        if self._physics_error:
            return {"success": False, "fail": True}
        if self.goal is None:
            return {"success": False, "fail": False}
        return self._goal_evaluator()()

    def _goal_evaluator(self) -> Callable[[], dict[str, Any]]:
        """The goal bound to the current view (rebound if the goal or the scene changed)."""
        goal, view = self.goal, self.view
        assert goal is not None, "evaluate() returns early without a goal"
        bound = self._bound_goal
        if bound is None or bound[0] is not goal or bound[1] is not view:
            bind = getattr(goal, "bind", None)  # duck-typed goals may only evaluate
            evaluator = bind(view) if bind is not None else partial(goal.evaluate, view)
            bound = self._bound_goal = (goal, view, evaluator)
        return bound[2]

    def get_info(self) -> dict[str, Any]:
        """:meth:`evaluate` merged with progress, step count and a state summary."""
        facts = self.evaluate()
        progress = 0.0
        if self.goal is not None and not self._physics_error:
            progress = self.goal.progress(facts)
        if self.info_mode == "minimal":
            return {
                "success": facts["success"],
                "fail": facts["fail"],
                "progress": progress,
                "elapsed_steps": self.elapsed_steps,
                "physics_error": self._physics_error,
            }
        info: dict[str, Any] = dict(facts)
        info["progress"] = progress
        info["elapsed_steps"] = self.elapsed_steps
        info["physics_error"] = self._physics_error
        info["suction_lost"] = self._suction_lost
        info["state"] = self._state_summary()
        return info

    def _state_summary(self) -> dict[str, Any]:
        robot = self.scene.robot
        x, y, z = self._obs.eef_position()
        return {
            "eef_pos": [_round4(x), _round4(y), _round4(z)],
            "suction": robot.suction_on,
            "grasped": self.view.grasped(),
            "joints": self._obs.last_joint_values(),
        }

    def _reward(self, info: dict[str, Any]) -> float:
        if self.reward_mode == "none":
            return 0.0
        if self.reward_mode == "sparse":
            return float(info["success"])
        phi = float(info["progress"])
        return phi * (MAX_DENSE_REWARD if self.reward_mode == "dense" else 1.0)

    # state and rendering -------------------------------------------------------------
    def get_state(self) -> SimState:
        """A portable snapshot of the dynamic state (bodies, joints, suction, step, world)."""
        state = capture_state(self.scene, self.elapsed_steps)
        state.world_seed = None if self._world is None else self._world.world_seed
        return state

    def set_state(self, state: SimState) -> None:
        """Restore a snapshot from :meth:`get_state` (same scene config).

        A state taken in another randomized world of this env re-enters that world first.
        """
        seed = state.world_seed
        if self._variation is not None and seed is not None and (
                self._world is None or self._world.world_seed != seed):
            self._enter_world(seed)
        restore_state(self.scene, state)
        self.elapsed_steps = state.elapsed_steps
        self._physics_error = False
        self._bound_goal = None  # goal memory (SequenceGoal) counts from the restored state

    def render(self):
        """RGB image ``(H, W, 3)`` from the configured camera (``render_mode="rgb_array"``)."""
        if self.render_mode is None:
            gym.logger.warn("render() called without render_mode; pass render_mode='rgb_array'")
            return None
        rgb = self.backend.render(self._camera).rgb
        return rgb if self._world is None else self._world.brighten(rgb)

    def render_camera(self, name: str, depth: bool = False):
        """Render any camera of the scene config (RGB, depth, segmentation)."""
        result = self.backend.render(self._pick_camera(name), depth=depth)
        if self._world is None:
            return result
        return dataclasses.replace(result, rgb=self._world.brighten(result.rgb))

    def close(self) -> None:
        """Release the physics backend."""
        if getattr(self, "backend", None) is not None:
            self.backend.close()


def _turn(orn: Sequence[float], rotvec: Sequence[float]) -> list[float]:
    """``quat_multiply(orn, quat_from_axis_angle(rotvec))`` on plain floats.

    Why not the helpers: on 4-vectors numpy's per-call overhead dominates, and
    this runs every control step. The operations (and their order) are the
    helpers' own, so the result is bit-identical; the norm stays a numpy dot
    for the same reason.
    """
    vector = np.array(rotvec)
    angle = math.sqrt(vector.dot(vector))
    ax, ay, az, aw = orn
    if angle < 1e-12:
        bx, by, bz, bw = 0.0, 0.0, 0.0, 1.0
    else:
        rx, ry, rz = rotvec
        s = math.sin(angle / 2.0)
        bx, by, bz, bw = rx / angle * s, ry / angle * s, rz / angle * s, math.cos(angle / 2.0)
    return [
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    ]


def _round4(value: float) -> float:
    """``np.round(value, 4)`` on a plain float (numpy scales, rounds half to even, unscales)."""
    if not math.isfinite(value):
        return value
    scaled = round(value * 10000.0)
    return scaled / 10000.0 if scaled else math.copysign(0.0, value)


def _as_scene_config(scene: SceneConfig | dict | str | Path) -> SceneConfig:
    if isinstance(scene, SceneConfig):
        return scene
    if isinstance(scene, dict):
        return SceneConfig.parse(scene)
    return SceneConfig.from_yaml(scene)
