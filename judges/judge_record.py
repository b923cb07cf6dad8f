"""``JudgeRecord``: keep a judge's per-step signals, stream the OPD metrics, write episodes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym

from .base import Judge
from .episode import EpisodeRecord, StepRecord, library_versions
from .metrics import StreamingOPD
from .signals import SUCCESS, JudgeSignal, to_jsonable
from .stepping import BaseJudgeWrapper, ContextSource, put_info

__all__ = ["JudgeRecord"]


class JudgeRecord(BaseJudgeWrapper):
    """Record every signal of a judge and score the episode's Φ with the OPD metrics.

    The OPD metrics (MC, MP, PPL, CRA, STR of "PRM-as-a-Judge", see
    :mod:`simjudge.judges.metrics.opd`) are accumulated in O(1) per step with
    :class:`~simjudge.judges.metrics.StreamingOPD`, so they equal the batch
    :func:`~simjudge.judges.metrics.opd_metrics` on the recorded Φ. When given a folder, each
    episode is written as ``episode_<k:06d>.json`` in the format documented in
    :mod:`simjudge.judges.episode` (signals, privileged Φ, actions, seed, env kwargs,
    outcome), so that episodes can be re-judged and replayed. An episode cut short by
    ``reset()`` or ``close()`` is written too, with ``outcome.finished = false``. Put it
    outside :class:`JudgeVerify` so that it sees the episodes that verdicts end.

    Example:
        >>> from simjudge.judges import JudgeRecord, make_judge
        >>> from simjudge.tasks.spec import make_task_env
        >>> env = JudgeRecord(make_task_env("OpenDrawer-v0", horizon=3), make_judge("privileged"))
        >>> obs, info = env.reset(seed=0)
        >>> for _ in range(3):
        ...     obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
        >>> sorted(info["judge_record"]["opd"])
        ['CRA', 'MC', 'MP', 'PPL', 'STR']

    **Info keys** (only when an episode ends; the key is configurable with ``key``):

    - ``judge_record`` (dict): ``opd`` (dict MC/MP/PPL/CRA/STR as floats, or None when the
      judge gave no Φ on some step), ``steps`` (int), ``verdict`` (str, last verdict),
      ``path`` (str of the written file, or None without a folder).

    Change logs:
     * v0.1.0 - Initially added.

    Args:
        env: The env.
        judge: The judge; one instance per env (``judge.clone()``).
        folder: Where to write episode files; None keeps records in memory only
            (:attr:`last_record`).
        epsilon: Stagnation threshold ε of STR (calibrate with
            :func:`~simjudge.judges.metrics.calibrate_epsilon`; record it with the results).
        k: Milestone bins K of MC.
        record_states: Store ``info["state"]`` (privileged summary) per step.
        context: Judge context, a function of the env returning one, or None (derived).
        key: Info key.
    """

    def __init__(
        self,
        env: gym.Env,
        judge: Judge,
        folder: str | Path | None = None,
        epsilon: float = 0.01,
        k: int = 4,
        record_states: bool = True,
        context: ContextSource = None,
        key: str = "judge_record",
    ) -> None:
        super().__init__(env, judge, context)
        self.folder = Path(folder) if folder is not None else None
        self.epsilon = float(epsilon)
        self.k = int(k)
        self.record_states = bool(record_states)
        self.key = key
        self._opd = StreamingOPD(self.epsilon, self.k)
        self._opd_ok = False
        self._record: EpisodeRecord | None = None
        self.last_record: EpisodeRecord | None = None
        self.written: list[Path] = []

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Close any unfinished record, reset the env and the judge, start a new record."""
        self._finish(finished=False)
        obs, info = self.env.reset(seed=seed, options=options)
        signal = self._judge_reset(obs, info, seed)
        spec = getattr(self.env, "spec", None)
        self._record = EpisodeRecord(
            episode=self.episode,
            judge=self.judge.label,
            judge_spec=self.judge.spec,
            env_id=spec.id if spec is not None else None,
            env_kwargs=to_jsonable(dict(spec.kwargs)) if spec is not None else {},
            seed=seed,
            reset_options=to_jsonable(options) if options is not None else None,
            task_name=self.context.task_name if self.context else "",
            context=self.context.to_dict() if self.context else {},
            epsilon=self.epsilon,
            k=self.k,
            versions=library_versions(),
        )
        self._opd_ok = signal.phi is not None
        if signal.phi is not None:
            self._opd.reset(signal.phi)
        self._append(0, signal, info, None, None, False, False)
        return obs, info

    def step(self, action):
        """Step the env, record the signal, finish the record at episode end."""
        obs, reward, terminated, truncated, info = self.env.step(action)
        signal = self._judge_step(obs, action, reward, terminated, truncated, info)
        if self._opd_ok and signal.phi is not None:
            self._opd.update(signal.phi)
        else:
            self._opd_ok = False
        self._append(self.step_index, signal, info, action, reward, terminated, truncated)
        if terminated or truncated:
            path = self._finish(finished=True)
            info = dict(info)
            record = self.last_record
            value = {
                "opd": record.opd,
                "steps": self.step_index,
                "verdict": signal.verdict,
                "path": str(path) if path is not None else None,
            }
            put_info(info, self.key, value, type(self).__name__)
        return obs, reward, terminated, truncated, info

    def close(self) -> None:
        """Write an unfinished record, then close the env."""
        self._finish(finished=False)
        super().close()

    # internals ---------------------------------------------------------------------------
    def _append(self, step, signal: JudgeSignal, info, action, reward, terminated, truncated):
        progress = info.get("progress")
        success = info.get("success")
        assert self._record is not None, "reset() starts the record"
        self._record.steps.append(
            StepRecord(
                step=step,
                signal=signal,
                action=to_jsonable(action) if action is not None else None,
                env_reward=float(reward) if reward is not None else None,
                terminated=bool(terminated),
                truncated=bool(truncated),
                progress=float(progress) if progress is not None else None,
                env_success=bool(success) if success is not None else None,
                state=to_jsonable(info.get("state")) if self.record_states else None,
            )
        )

    def _finish(self, finished: bool) -> Path | None:
        record, self._record = self._record, None
        if record is None:
            return None
        last = record.steps[-1]
        record.opd = self._opd.metrics().as_dict() if self._opd_ok else None
        record.outcome = {
            "verdict": last.signal.verdict,
            "is_success": last.signal.verdict == SUCCESS,
            "steps": last.step,
            "terminated": last.terminated,
            "truncated": last.truncated,
            "finished": finished,
        }
        stats = self.judge.stats["observe"]
        record.judge_stats = {"observe_calls": stats.calls, "observe_seconds": stats.seconds}
        self.last_record = record
        if self.folder is None:
            return None
        path = record.save(self.folder / f"episode_{record.episode:06d}.json")
        self.written.append(path)
        return path
