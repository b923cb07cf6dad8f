"""Judges that watch every executed subtask live: the subtask's own code and the task goal.

:class:`LiveSubtaskJudges` implements the executor's observer contract
(:class:`simjudge.skills.observers.SubtaskObserver`). For each subtask it runs, on every
executed control step (whichever solver moves the arm: primitives, SAC or MPC rollouts, the
oracle):

- the subtask's own judge: :class:`~simjudge.judges.code.CodeRewardJudge` over a ``reward``
  subtask's compiled reward (its reward term and its success output), or
  :class:`~simjudge.judges.code.CodeSuccessJudge` over a ``primitive`` block's success lines;
- the task goal's progress judge: :class:`~simjudge.judges.privileged.PrivilegedProgressJudge`
  over the independent task goal (never the proposal's code), whose Φ ∈ [0, 1] is scored with
  the OPD metrics (MC, MP, PPL, CRA, STR; :func:`~simjudge.judges.metrics.opd_metrics`).

These are the same judges and metrics the wrappers :class:`~simjudge.judges.JudgeReward`,
:class:`~simjudge.judges.JudgeVerify` and :class:`~simjudge.judges.JudgeRecord` put around a
Gymnasium loop; a primitive block or an MPC solve is not such a loop, so the executor feeds
them through the env's step hook instead.

**Files** written into the subtask's folder by :meth:`LiveSubtaskJudges.finish`:

``phi_trace.json``  ``{"steps": [0..T], "task_phi": [Φ_0..Φ_T] | null,
                    "subtask_reward": [...], "subtask_success": [bool...],
                    "task_success": [bool...] | null}``
``opd.json``        ``{"task_goal": {"MC", "MP", "PPL", "CRA", "STR", "T", "phi_0", "phi_T"} |
                    null, "epsilon", "k"}``
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from simjudge.tasks.spec import Subtask, write_json

from .base import Judge
from .code import CodeRewardJudge, CodeSuccessJudge
from .context import JudgeContext
from .metrics import opd_metrics
from .privileged import PrivilegedProgressJudge
from .signals import SUCCESS_CODE

_NO_INFO: dict[str, Any] = {}
"""The executor's judges read the view only (no env ``info`` outside a Gymnasium loop)."""

__all__ = ["LiveSubtaskJudges"]


class LiveSubtaskJudges:
    """The executor's live judges (see the module docstring).

    Args:
        goal: The task's independent goal as an env goal (``evaluate(view)`` facts and
            ``progress(facts)`` Φ), or None when the task has none (no task Φ, no OPD).
        epsilon: Stagnation threshold ε of the OPD STR metric.
        k: Milestone bins of the OPD MC metric.
    """

    def __init__(self, goal: Any = None, epsilon: float = 0.01, k: int = 4) -> None:
        self.goal = goal
        self.epsilon = float(epsilon)
        self.k = int(k)
        self._env: Any = None
        self._subtask_judge: Judge | None = None
        self._task_judge: PrivilegedProgressJudge | None = None
        self._rows: dict[str, list[Any]] = {}

    def start(self, env: Any, index: int, subtask: Subtask) -> None:
        """Reset the judges for subtask ``index`` and observe its start state."""
        self._env = env
        context = JudgeContext.from_env(
            env, subtask_kind=subtask.kind, subtask_code=subtask.code, subtask_name=subtask.name
        )
        if subtask.kind == "reward":
            self._subtask_judge = CodeRewardJudge(subtask.code)
        else:
            self._subtask_judge = CodeSuccessJudge(subtask.code, kind="primitive")
        self._subtask_judge.reset(context)
        self._task_judge = None
        if self.goal is not None:
            self._task_judge = PrivilegedProgressJudge(self.goal)
            self._task_judge.reset(context)
        self._rows = {"steps": [], "task_phi": [], "task_success": [], "subtask_reward": [],
                      "subtask_success": []}
        self._observe(0)

    def on_step(self) -> None:
        """Observe the state after an executed control step."""
        self._observe(len(self._rows["steps"]))

    def _observe(self, step: int) -> None:
        # the judges' fast path: the rows need numbers and verdicts, never reasons or details
        view = self._env.view
        assert self._subtask_judge is not None, "call start() first"
        reward, _, code, _ = self._subtask_judge.observe_fast(step, view, _NO_INFO)
        rows = self._rows
        rows["steps"].append(step)
        rows["subtask_reward"].append(reward if math.isfinite(reward) else None)
        rows["subtask_success"].append(code == SUCCESS_CODE)
        if self._task_judge is not None:
            _, phi, code, _ = self._task_judge.observe_fast(step, view, _NO_INFO)
            rows["task_phi"].append(phi)
            rows["task_success"].append(code == SUCCESS_CODE)

    def finish(self, folder: Path) -> dict[str, Any]:
        """Write ``phi_trace.json`` and ``opd.json``; return the subtask's judge summary.

        The end state is observed once more: a primitive may change the world after its
        last control step (suction welds the part when the grasp closes), and the judges'
        last row must describe the state the subtask's verdict is about. The extra row is
        kept only if a signal changed.
        """
        rows = self._rows
        last = {k: v[-1] for k, v in rows.items() if v}
        self._observe(len(rows["steps"]))
        if all(rows[k][-1] == value for k, value in last.items() if k != "steps"):
            for column in rows.values():
                if column:
                    column.pop()
        has_task = self._task_judge is not None and bool(rows["task_phi"])
        trace: dict[str, list[Any] | None] = dict(rows)
        if not has_task:
            trace["task_phi"] = trace["task_success"] = None
        opd = None
        if has_task:
            metrics = opd_metrics(rows["task_phi"], self.epsilon, self.k)
            opd = {**metrics.as_dict(), "T": metrics.T, "phi_0": metrics.phi_0,
                   "phi_T": metrics.phi_T}
        write_json(folder / "phi_trace.json", trace)
        write_json(folder / "opd.json", {"task_goal": opd, "epsilon": self.epsilon, "k": self.k})
        if self._subtask_judge is not None:
            self._subtask_judge.close()
        return {
            "steps": len(rows["steps"]) - 1,
            "subtask_judge": getattr(self._subtask_judge, "name", ""),
            "subtask_success_final": bool(rows["subtask_success"][-1]),
            "task_goal_final": bool(rows["task_success"][-1]) if has_task else None,
            "task_phi_final": rows["task_phi"][-1] if has_task else None,
            "opd": opd,
            "files": ["phi_trace.json", "opd.json"],
        }
