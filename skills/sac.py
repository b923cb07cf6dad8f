"""SAC skill learning: a thin typed adapter over stable-baselines3 ``SAC``.

A reward subtask (:class:`~simjudge.skills.subtask_env.SubtaskSpec`) is learned in
its :class:`~simjudge.skills.subtask_env.SubtaskEnv` with SB3's SAC (RoboGen/VERGSA:
MLP 256×256×256, horizon 100, frameskip 2). Differences from RoboGen, on purpose:

- the best model is kept **by success rate** (ties by mean return), not by return;
- training stops early once the subtask's own success holds on the evaluation
  episodes (:class:`EarlyStopOnSuccess`), instead of always spending 1M steps;
- a reward that fails to compile, raises or returns NaN is a failure *result* with
  the error's type and message, never a crash;
- the policy is saved with its start state and subtask spec (``.zip`` + ``.json``)
  so it replays exactly (:func:`load_policy`, :func:`rollout_policy`).

Evaluation: ``n_eval_episodes`` episodes from the start state; episode 0 runs the
deterministic policy as is (the one the executor replays), episodes ``k ≥ 1`` add
seeded Gaussian noise of std ``eval_noise`` to its actions, so the success rate
measures robustness and is not 0/1 on a deterministic simulator.
"""

from __future__ import annotations

import contextlib
import copy
import importlib.util
import json
import time
import warnings
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import gymnasium as gym
import numpy as np

from simjudge.envs.codegen import GeneratedCodeError
from simjudge.tasks.spec import write_json

try:
    from stable_baselines3.common.callbacks import BaseCallback
except ImportError as _exc:  # pragma: no cover - depends on the install
    raise ImportError(
        "simjudge.skills.sac needs stable-baselines3 and torch; install them with "
        "`pip install 'simjudge[rl]'`"
    ) from _exc

from .subtask_env import (
    EvalResult,
    PolicyRollout,
    SubtaskEnv,
    SubtaskSpec,
    evaluate_policy,
    make_subtask_env,
    rollout_policy,
)

__all__ = [
    "EarlyStopOnSuccess",
    "EvalResult",
    "PolicyRollout",
    "SACConfig",
    "SACResult",
    "check_action_space",
    "evaluate_policy",
    "load_policy",
    "make_sac",
    "rollout_policy",
    "save_policy",
    "train_sac",
]

NON_FINITE_ACTIONS = (
    "SAC needs a Box action space with finite bounds, got low={low}, high={high}. "
    "Rescale the env's actions to [-1, 1], e.g. gymnasium.wrappers.RescaleAction(env, -1.0, 1.0) "
    "after giving the Box finite bounds, or clip them with gymnasium.wrappers.ClipAction."
)


@dataclass
class SACConfig:
    """SAC and training settings (SB3 names where they exist).

    Attributes:
        total_steps: Env-step budget (RoboGen: 1M; early stopping usually ends far sooner).
        net_arch: Hidden layers of the actor and critics (RoboGen: 256×256×256).
        learning_rate: One learning rate for actor, critics and entropy (as VERGSA).
        batch_size: Minibatch size.
        buffer_size: Replay buffer capacity.
        learning_starts: Random-action steps before learning.
        train_freq: Env steps (per env) between updates.
        gradient_steps: Gradient steps per update.
        gamma: Discount.
        tau: Target smoothing.
        ent_coef: Entropy coefficient (``"auto"`` learns it).
        n_envs: Parallel envs.
        vec_env: ``"dummy"`` (one process) or ``"subproc"`` (one process per env).
        eval_freq: Env steps between evaluations.
        n_eval_episodes: Episodes per evaluation.
        eval_noise: Action noise std of evaluation episodes 1.. (episode 0 is noise-free).
        success_threshold: Stop once the evaluation success rate reaches this and the
            noise-free episode succeeds.
        seed: Seed of SAC, the envs and the evaluation noise.
        device: Torch device.
        torch_threads: Torch intra-op threads during training (1 is fastest for small
            nets on a few cores); None leaves torch's setting alone.
        tensorboard_log: Folder for TensorBoard logs (needs ``pip install tensorboard``).
        progress_bar: Show a tqdm bar.
        verbose: SB3 verbosity.
    """

    total_steps: int = 50_000
    net_arch: tuple[int, ...] = (256, 256, 256)
    learning_rate: float = 3e-4
    batch_size: int = 256
    buffer_size: int = 200_000
    learning_starts: int = 1_000
    train_freq: int = 1
    gradient_steps: int = 1
    gamma: float = 0.95
    tau: float = 0.005
    ent_coef: str | float = "auto"
    n_envs: int = 1
    vec_env: Literal["dummy", "subproc"] = "dummy"
    eval_freq: int = 1_000
    n_eval_episodes: int = 5
    eval_noise: float = 0.1
    success_threshold: float = 0.8
    seed: int = 0
    device: str = "cpu"
    torch_threads: int | None = 1
    tensorboard_log: str | None = None
    progress_bar: bool = True
    verbose: int = 0


@dataclass
class SACResult:
    """Outcome of :func:`train_sac`.

    Attributes:
        success: The success threshold was reached.
        reason: Why not (empty on success).
        env_steps: Env steps trained.
        wall_time_s: Wall-clock seconds, including evaluations.
        best_success_rate: Success rate of the kept model.
        best_mean_return: Its mean return.
        steps_to_success: Env steps when the threshold was reached, or None.
        eval_history: Every evaluation.
        model_path: Saved policy (``.zip``; the ``.json`` beside it holds the spec).
        error_type: The reward error's type name when the reward code failed.
        net_arch: Hidden layers used.
        policy: The kept model (in memory only).
    """

    success: bool
    reason: str = ""
    env_steps: int = 0
    wall_time_s: float = 0.0
    best_success_rate: float = 0.0
    best_mean_return: float = float("-inf")
    steps_to_success: int | None = None
    eval_history: list[EvalResult] = field(default_factory=list)
    model_path: str | None = None
    error_type: str | None = None
    net_arch: tuple[int, ...] = ()
    policy: Any = field(default=None, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (without the in-memory policy)."""
        out = {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "policy"}
        out["eval_history"] = [asdict(e) for e in self.eval_history]
        out["net_arch"] = list(self.net_arch)
        return out


def check_action_space(space: gym.Space) -> None:
    """Reject action spaces SAC cannot use, saying how to fix them.

    Raises:
        ValueError: Not a ``Box``, or a ``Box`` with non-finite bounds.
    """
    if not isinstance(space, gym.spaces.Box):
        raise ValueError(
            f"SAC supports only Box action spaces, but {type(space).__name__} was provided; "
            "use a continuous (Box) action space"
        )
    if not (np.all(np.isfinite(space.low)) and np.all(np.isfinite(space.high))):
        raise ValueError(NON_FINITE_ACTIONS.format(low=space.low, high=space.high))


def make_sac(env: gym.Env | Any, config: SACConfig) -> Any:
    """Create an SB3 ``SAC`` for ``env`` (a Gymnasium env or SB3 VecEnv) from ``config``.

    Raises:
        ValueError: The action space is not a finite Box (see :func:`check_action_space`).
    """
    from stable_baselines3 import SAC

    check_action_space(env.action_space)
    return SAC(
        "MlpPolicy",
        env,
        learning_rate=config.learning_rate,
        buffer_size=config.buffer_size,
        learning_starts=config.learning_starts,
        batch_size=config.batch_size,
        tau=config.tau,
        gamma=config.gamma,
        train_freq=config.train_freq,
        gradient_steps=config.gradient_steps,
        ent_coef=config.ent_coef,
        policy_kwargs={"net_arch": list(config.net_arch)},
        tensorboard_log=_tensorboard_dir(config.tensorboard_log),
        seed=config.seed,
        device=config.device,
        verbose=config.verbose,
    )


def _tensorboard_dir(path: str | None) -> str | None:
    if path is None:
        return None
    if importlib.util.find_spec("tensorboard") is None:
        warnings.warn(
            f"TensorBoard logs were requested in {path!r} but tensorboard is not installed; "
            "training continues without them. Install it with `pip install tensorboard`.",
            stacklevel=3,
        )
        return None
    return str(path)


class EarlyStopOnSuccess(BaseCallback):
    """Evaluate every ``eval_freq`` env steps; keep the best model; stop on success.

    The best model is the one with the highest success rate, ties broken by the
    noise-free episode's success, then by mean return; its parameters are kept in
    :attr:`best_params` (when training stops on success, the model that reached it).
    ``_on_step`` returns False (SB3 stops training) once the success rate reaches
    ``threshold`` and the noise-free episode succeeds, or when the reward code
    fails, either in training (``info["reward_error"]`` of any env) or in evaluation.

    Args:
        eval_env: Env of the evaluation episodes.
        eval_freq: Env steps between evaluations (the first is at the first step).
        n_eval_episodes: Episodes per evaluation.
        threshold: Success rate that stops training.
        seed: Seed of the evaluation noise.
        noise: Action-noise std of evaluation episodes 1...
    """

    def __init__(
        self,
        eval_env: SubtaskEnv,
        eval_freq: int = 1_000,
        n_eval_episodes: int = 5,
        threshold: float = 0.8,
        seed: int = 0,
        noise: float = 0.1,
    ) -> None:
        super().__init__(verbose=0)
        self.eval_env = eval_env
        self.eval_freq = max(1, int(eval_freq))
        self.n_eval_episodes = n_eval_episodes
        self.threshold = threshold
        self.seed = seed
        self.noise = noise
        self.history: list[EvalResult] = []
        self.best: EvalResult | None = None
        self.best_params: dict[str, Any] | None = None
        self.steps_to_success: int | None = None
        self.error: dict[str, str] | None = None
        self._last_eval = -self.eval_freq

    def _on_step(self) -> bool:
        for info in self.locals.get("infos", ()):
            if "reward_error" in info:
                self.error = info["reward_error"]
                return False
        if self.num_timesteps - self._last_eval < self.eval_freq:
            return True
        return self.evaluate()

    def evaluate(self) -> bool:
        """Evaluate now; return whether training should go on."""
        self._last_eval = self.num_timesteps
        result = evaluate_policy(
            self.model,
            self.eval_env,
            self.n_eval_episodes,
            step=self.num_timesteps,
            seed=self.seed,
            noise=self.noise,
        )
        self.history.append(result)
        if result.error is not None:
            self.error = result.error
            return False
        if self.best is None or result.key() > self.best.key():
            self.best = result
            self.best_params = copy.deepcopy(self.model.policy.state_dict())
        self.logger.record("eval/success_rate", result.success_rate)
        self.logger.record("eval/mean_return", result.mean_return)
        if result.success_rate >= self.threshold and result.deterministic_success:
            # keep the model that met the criterion, even if an earlier one had a higher
            # rate with a failing noise-free episode: the noise-free one is what is replayed
            self.best = result
            self.best_params = copy.deepcopy(self.model.policy.state_dict())
            self.steps_to_success = self.num_timesteps
            return False
        return True


class _TqdmCallback(BaseCallback):
    def __init__(self, total: int, desc: str, stopper: EarlyStopOnSuccess) -> None:
        super().__init__(verbose=0)
        self.total, self.desc, self.stopper = total, desc, stopper
        self.bar: Any = None

    def _on_training_start(self) -> None:
        from tqdm import tqdm

        self.bar = tqdm(total=self.total, desc=self.desc or "SAC", unit="step", leave=False)

    def _on_step(self) -> bool:
        self.bar.update(self.model.num_timesteps - self.bar.n)
        if self.stopper.history:
            self.bar.set_postfix(success=f"{self.stopper.history[-1].success_rate:.2f}")
        return True

    def _on_training_end(self) -> None:
        self.bar.close()


@contextlib.contextmanager
def _torch_threads(n: int | None) -> Iterator[None]:
    import torch

    before = torch.get_num_threads()
    if n is not None:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _failure(exc: Exception, start: float, config: SACConfig) -> SACResult:
    return SACResult(
        success=False,
        reason=f"reward code failed ({type(exc).__name__}): {exc}",
        wall_time_s=time.perf_counter() - start,
        error_type=type(exc).__name__,
        net_arch=tuple(config.net_arch),
    )


def _vec_env(spec: SubtaskSpec, config: SACConfig) -> Any:
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    if config.vec_env not in ("dummy", "subproc"):
        raise ValueError(f"vec_env must be 'dummy' or 'subproc', got {config.vec_env!r}")
    cls = SubprocVecEnv if config.vec_env == "subproc" else DummyVecEnv
    return make_vec_env(
        make_subtask_env,
        n_envs=config.n_envs,
        seed=config.seed,
        vec_env_cls=cls,
        env_kwargs={"spec": spec.to_dict()},
    )


def train_sac(
    spec: SubtaskSpec, config: SACConfig | None = None, out_dir: str | Path | None = None
) -> SACResult:
    """Learn a reward subtask with SAC until its success holds or the budget ends.

    Args:
        spec: The subtask (scene, reward code, start state, action space).
        config: SAC settings; defaults to :class:`SACConfig`.
        out_dir: Where ``policy.zip`` / ``policy.json`` of the best model go; None
            keeps it in memory only (:attr:`SACResult.policy`).

    Returns:
        A :class:`SACResult`; reward-code failures give ``success=False`` with the
        error's type and message in ``reason`` (training stops there).

    Raises:
        ValueError: The subtask's action space is not a finite Box.
    """
    from stable_baselines3.common.callbacks import CallbackList
    from stable_baselines3.common.utils import set_random_seed

    config = config or SACConfig()
    start = time.perf_counter()
    try:
        eval_env = SubtaskEnv(spec)
    except GeneratedCodeError as exc:
        return _failure(exc, start, config)
    try:
        check_action_space(eval_env.action_space)
        eval_env.reset(seed=config.seed)
        eval_env.evaluate_reward()  # fail fast on names the scene does not have
    except GeneratedCodeError as exc:
        eval_env.close()
        return _failure(exc, start, config)
    except ValueError:
        eval_env.close()
        raise
    set_random_seed(config.seed)
    vec = _vec_env(spec, config)
    stopper = EarlyStopOnSuccess(
        eval_env,
        config.eval_freq,
        config.n_eval_episodes,
        config.success_threshold,
        seed=config.seed,
        noise=config.eval_noise,
    )
    callbacks: list[BaseCallback] = [stopper]
    if config.progress_bar:
        callbacks.append(_TqdmCallback(config.total_steps, spec.name, stopper))
    try:
        with _torch_threads(config.torch_threads):
            model = make_sac(vec, config)
            model.learn(config.total_steps, callback=CallbackList(callbacks))
            if stopper.error is None and stopper.steps_to_success is None:
                if not stopper.history or stopper.history[-1].step != model.num_timesteps:
                    stopper.evaluate()  # the budget ended between evaluations
    finally:
        vec.close()
        eval_env.close()
    return _result(model, stopper, spec, config, start, out_dir)


def _result(
    model: Any,
    stopper: EarlyStopOnSuccess,
    spec: SubtaskSpec,
    config: SACConfig,
    start: float,
    out_dir: str | Path | None,
) -> SACResult:
    if stopper.best_params is not None:
        model.policy.load_state_dict(stopper.best_params)
    best = stopper.best
    result = SACResult(
        success=stopper.steps_to_success is not None,
        env_steps=int(model.num_timesteps),
        best_success_rate=best.success_rate if best else 0.0,
        best_mean_return=best.mean_return if best else float("-inf"),
        steps_to_success=stopper.steps_to_success,
        eval_history=stopper.history,
        net_arch=tuple(config.net_arch),
        policy=model,
    )
    if stopper.error is not None:
        result.error_type = stopper.error["type"]
        result.reason = f"reward code failed ({stopper.error['type']}): {stopper.error['message']}"
    elif not result.success:
        result.reason = (
            f"success rate {result.best_success_rate:.2f} < {config.success_threshold} "
            f"after {result.env_steps} env steps (budget {config.total_steps})"
        )
    result.wall_time_s = time.perf_counter() - start
    if out_dir is not None:
        meta = {"config": asdict(config), "result": result.to_dict()}
        result.model_path = str(save_policy(model, spec, Path(out_dir) / "policy", meta))
    return result


def save_policy(model: Any, spec: SubtaskSpec, path: str | Path, meta: dict | None = None) -> Path:
    """Write ``<path>.zip`` (SB3 model) and ``<path>.json`` (spec + ``meta``); return the zip."""
    path = Path(path).with_suffix("")
    path.parent.mkdir(parents=True, exist_ok=True)
    model.save(path.with_suffix(".zip"))
    record = {"spec": spec.to_dict(), **(meta or {})}
    write_json(path.with_suffix(".json"), record)
    return path.with_suffix(".zip")


def load_policy(path: str | Path, device: str = "cpu") -> tuple[Any, SubtaskSpec]:
    """Load a policy saved by :func:`save_policy` with its subtask spec.

    Example: ``model, spec = load_policy("run/subtasks/01/policy.zip")``, then
    ``rollout_policy(model, SubtaskEnv(spec))`` replays it from its start state.
    """
    from stable_baselines3 import SAC

    path = Path(path).with_suffix("")
    meta = path.with_suffix(".json")
    if not meta.exists():
        raise FileNotFoundError(
            f"{meta} is missing; a policy is saved as <name>.zip + <name>.json by save_policy()"
        )
    spec = SubtaskSpec.from_dict(json.loads(meta.read_text())["spec"])
    return SAC.load(path.with_suffix(".zip"), device=device), spec
