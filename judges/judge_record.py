"""``JudgeRecord``: keep a judge's per-step signals, stream the OPD metrics, write episodes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, cast

import gymnasium as gym
import numpy as np

from .base import Judge
from .context import JudgeContext
from .episode import EpisodeRecord, StepRecord, library_versions
from .metrics import StreamingOPD
from .metrics.opd import opd_scorer
from .signals import SUCCESS, VERDICT_OF_CODE, FastSignal, to_jsonable
from .stepping import BaseJudgeWrapper, ContextSource, put_info

__all__ = ["JudgeRecord"]


class JudgeRecord(BaseJudgeWrapper):
    """Record every signal of a judge and score the episode's Φ with the OPD metrics.

    Each step costs one row (the judge's fast-path result, the env's progress, success and
    state, the action's bytes; see ``_Row``):
    reasons, details, JSON-ready states and the :class:`EpisodeRecord` are built when the
    episode is written or :attr:`last_record` is read. The OPD metrics (MC, MP,
    PPL, CRA, STR of "PRM-as-a-Judge", see :mod:`simjudge.judges.metrics.opd`) are computed
    in one pass at the episode's end with the arithmetic of
    :class:`~simjudge.judges.metrics.StreamingOPD` (``streaming_opd=True`` also keeps them up
    to date on every step, :attr:`live_opd`, for live display). When given a folder, each
    episode is written as ``episode_<k:06d>.json`` in the format documented in
    :mod:`simjudge.judges.episode` (signals, privileged Φ, actions, seed, env kwargs,
    outcome), so that episodes can be re-judged and replayed. An episode cut short by
    ``reset()`` or ``close()`` is written too, with ``outcome.finished = false``. Put it
    outside :class:`JudgeVerify` so that it sees the episodes that verdicts end.

    Examples:
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
        streaming_opd: Also update the OPD metrics on every step (:attr:`live_opd`).
        success_every: Check success-type judges only every k steps (and on the episode's
            last step); None keeps the judge's setting (every step by default).
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
        streaming_opd: bool = False,
        success_every: int | None = None,
    ) -> None:
        super().__init__(env, judge, context, success_every)
        self.folder = Path(folder) if folder is not None else None
        self.epsilon = float(epsilon)
        self.k = int(k)
        self._score_opd = opd_scorer(self.epsilon, self.k)  # checks ε and k now, not at an end
        self.record_states = bool(record_states)
        self.key = key
        self._live = StreamingOPD(self.epsilon, self.k) if streaming_opd else None
        self._live_ok = False
        self._log = RowLog()  # the episode's rows and their Φ (between episodes: unrecorded)
        self._header: _Header | None = None
        self._action_form: _ActionForm | None = None
        self._pending: _Finished | None = None
        self._last_record: EpisodeRecord | None = None
        self._last_opd: dict[str, float] | None = None
        self.written: list[Path] = []

    @property
    def last_record(self) -> EpisodeRecord | None:
        """The record of the latest finished episode (built when first read)."""
        if self._pending is not None:
            self._last_record = self._pending.build()
            self._pending = None
        return self._last_record

    @property
    def live_opd(self) -> dict[str, float] | None:
        """The OPD metrics of the episode so far (``streaming_opd=True``; None without Φ)."""
        if self._live is None:
            raise ValueError("live_opd needs JudgeRecord(..., streaming_opd=True)")
        return self._live.metrics().as_dict() if self._live_ok else None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Close any unfinished record, reset the env and the judge, start a new record."""
        self._finish(finished=False)
        obs, info = self.env.reset(seed=seed, options=options)
        fast = self._judge_reset(obs, info, seed)
        # tuple.__new__: the NamedTuple's fields in order, without its Python-level __new__
        # (cold after the physics of the reset, as is everything at an episode's ends)
        self._header = tuple.__new__(_Header, (
            self.episode,
            getattr(self.env, "spec", None),
            seed,
            to_jsonable(options) if options is not None else None,
            self.context,
            getattr(self.env.unwrapped, "world_sample", None),
        ))
        if self._action_form is not None and self._action_form.dtype is None:
            self._action_form = None  # a form that keeps no bytes: let this episode set one
        self._log = RowLog()
        self._log.add(self._row(fast, info, None, None, False, False), fast.phi)
        if self._live is not None:
            phi = fast.phi
            self._live_ok = phi is not None
            if phi is not None:
                self._live.reset(phi)
        return obs, info

    def step(self, action):
        """Step the env, record the judge's result, finish the record at episode end."""
        obs, reward, terminated, truncated, info = self.env.step(action)
        observe = self._lean_observe  # the wrapper's lean step when it runs the judge itself
        fast = (self._lean_step(observe, info, terminated or truncated) if observe is not None
                else self._judge_step(obs, action, reward, terminated, truncated, info))
        self._log.add(self._row(fast, info, action, reward, terminated, truncated), fast.phi)
        if self._live is not None:
            if self._live_ok and fast.phi is not None:
                self._live.update(fast.phi)
            else:
                self._live_ok = False
        if terminated or truncated:
            path = self._finish(finished=True)
            info = dict(info)
            value = {
                "opd": self._last_opd,
                "steps": self.step_index,
                "verdict": VERDICT_OF_CODE[fast.code],
                "path": str(path) if path is not None else None,
            }
            put_info(info, self.key, value, type(self).__name__)
        return obs, reward, terminated, truncated, info

    def close(self) -> None:
        """Write an unfinished record, then close the env."""
        self._finish(finished=False)
        super().close()

    # internals ---------------------------------------------------------------------------
    def _row(
        self, fast: FastSignal, info: Mapping[str, Any], action: Any, reward: Any,
        terminated: bool, truncated: bool,
    ) -> _Row:
        """A step's row as a tuple (see ``_Row``).

        The action is copied (callers may reuse their array): a numeric array of the recorder's
        form (set by the first array action, kept from episode to episode) as its bytes, one
        object instead of a list of floats (decoded when the record is built); anything else as
        a JSON-ready list (the same list the bytes decode to).
        """
        if type(action) is np.ndarray:
            form = self._action_form
            if form is None:
                form = self._action_form = _ActionForm.of(action)
            row_action = (
                action.tobytes() if action.dtype is form.dtype and action.shape == form.shape
                else action.tolist()
            )
        else:
            row_action = to_jsonable(action)
        get = info.get  # what a row keeps of info: progress, success, (record_states) state
        state = get("state") if self.record_states else None
        return (fast, get("progress"), get("success"), state, row_action, reward, terminated,
                truncated)

    def _finish(self, finished: bool) -> Path | None:
        header, log = self._header, self._log
        if header is None:
            return None
        # steps after the episode's end, before a reset, go to a log no record reads (as before)
        self._header, self._log = None, RowLog()
        phi = log.phis()
        opd = None if None in phi else self._score_opd(cast(list[float], phi))
        self._last_opd = opd
        stats = self.judge.stats["observe"]
        self._pending = tuple.__new__(_Finished, (  # as _Header above
            self, header, log, opd, finished, (stats.calls, stats.seconds), self._action_form,
        ))
        self._last_record = None
        if self.folder is None:
            return None
        record = self.last_record
        assert record is not None, "an episode was just finished"
        path = record.save(self.folder / f"episode_{record.episode:06d}.json")
        self.written.append(path)
        return path


_Row = tuple[FastSignal, Any, Any, Any, Any, Any, bool, bool]
"""One recorded step: judge result, the env's progress, success and state, action, env
reward, flags.

The three values of ``info`` a record needs rather than the env's info dict; the action
JSON-ready, or the bytes of a numeric array of the recorder's :class:`_ActionForm` (one
object a step instead of a list and a float per dimension, decoded when the record is built).
"""


class RowLog:
    """An episode's rows and each row's Φ, in order (Φ kept apart for the OPD metrics)."""

    __slots__ = ("_phis", "_rows")

    def __init__(self) -> None:
        self._rows: list[_Row] = []
        self._phis: list[float | None] = []

    def add(self, row: _Row, phi: float | None) -> None:
        """Add a step's row and its Φ (None: the judge gave no Φ)."""
        self._rows.append(row)
        self._phis.append(phi)

    def rows(self) -> list[_Row]:
        """Every row, in order."""
        return self._rows

    def phis(self) -> list[float | None]:
        """Each row's Φ, in order."""
        return self._phis

    def __len__(self) -> int:
        return len(self._rows)


@dataclass(frozen=True)
class _ActionForm:
    """Dtype and shape of the array actions kept as bytes in the rows (the first action's).

    Why bytes: a step's action list (a list and a float per dimension) is the recorder's
    largest per-step allocation, and objects kept for a whole episode crowd the physics out
    of the CPU caches; bytes are one object, decoded to the same list when the record is built.
    """

    dtype: np.dtype | None
    """The dtype (None: not a plain number type; such actions are kept as lists)."""
    shape: tuple[int, ...]

    @staticmethod
    def of(action: np.ndarray) -> _ActionForm:
        """The form of ``action`` (dtype None unless bool, integer or float)."""
        if action.dtype.kind not in "biuf":
            return _ActionForm(None, action.shape)
        return _ActionForm(action.dtype, action.shape)

    def decode(self, action: Any) -> Any:
        """A row's action as a JSON-ready list (bytes decoded; lists and others as they are)."""
        if type(action) is bytes:
            return np.frombuffer(action, dtype=self.dtype).reshape(self.shape).tolist()
        return action


class _Header(NamedTuple):
    """What a record needs from the reset (the rest is built when the record is)."""

    episode: int
    spec: Any
    seed: int | None
    reset_options: Any
    context: JudgeContext | None
    world: dict[str, Any] | None
    """The env's ``world_sample`` after the reset (None: a fixed world)."""


class _Finished(NamedTuple):
    """A finished episode's rows; :meth:`build` makes its :class:`EpisodeRecord`."""

    recorder: JudgeRecord
    header: _Header
    log: RowLog
    opd: dict[str, float] | None
    finished: bool
    judge_stats: tuple[int, float]
    """The judge's observe calls and seconds when the episode finished."""
    action_form: _ActionForm | None

    def build(self) -> EpisodeRecord:
        """The episode record: signals explained, states made JSON-ready."""
        recorder, header = self.recorder, self.header
        judge, spec, context = recorder.judge, header.spec, header.context
        record = EpisodeRecord(
            episode=header.episode,
            judge=judge.label,
            judge_spec=judge.spec,
            env_id=spec.id if spec is not None else None,
            env_kwargs=to_jsonable(dict(spec.kwargs)) if spec is not None else {},
            seed=header.seed,
            reset_options=header.reset_options,
            world=to_jsonable(header.world) if header.world is not None else None,
            task_name=context.task_name if context else "",
            context=context.to_dict() if context else {},
            epsilon=recorder.epsilon,
            k=recorder.k,
            versions={**library_versions(), "backend": str(getattr(
                getattr(recorder.env.unwrapped, "backend", None), "name", "unknown"))},
        )
        explain = judge.explain
        form = self.action_form
        for step, row in enumerate(self.log.rows()):
            fast, progress, success, state, action, reward, terminated, truncated = row
            record.steps.append(
                StepRecord(
                    step=step,
                    signal=explain(fast),
                    action=(
                        to_jsonable(form.decode(action) if form is not None else action)
                        if action is not None else None
                    ),
                    env_reward=float(reward) if reward is not None else None,
                    terminated=bool(terminated),
                    truncated=bool(truncated),
                    progress=float(progress) if progress is not None else None,
                    env_success=bool(success) if success is not None else None,
                    state=to_jsonable(state) if state is not None else None,
                )
            )
        last = record.steps[-1]
        record.opd = self.opd
        record.outcome = {
            "verdict": last.signal.verdict,
            "is_success": last.signal.verdict == SUCCESS,
            "steps": last.step,
            "terminated": last.terminated,
            "truncated": last.truncated,
            "finished": self.finished,
        }
        calls, seconds = self.judge_stats
        record.judge_stats = {"observe_calls": calls, "observe_seconds": seconds}
        return record
