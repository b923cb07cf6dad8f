"""Joint-position action plans: recorded robot commands as ``(N, 8)`` actions, played back.

A skill or an executed solution moves the robot by commanding arm joint targets
(:meth:`PandaSuction.command <simjudge.envs.robot.PandaSuction.command>`) and turning suction
on and off between control steps. The same motion, as SimEnv ``joint_position`` actions, is
one action per control step: the last joint target commanded before that step and the
suction state during it (1 on, 0 off). Executed through SimEnv's ``joint_position`` mode
(command, suction, one control step) from the same start state, it reproduces the recorded
motion step for step.

* :func:`commands_to_actions`: a command log (``SimEnv.record_commands``, a skill's
  ``trajectory.json``) as actions.
* :class:`StepRecorder`: an executor observer that collects the actions of the steps that
  were executed (not planning look-ahead that was undone).
* :class:`JointPlanPlayer`: plays a plan back as action chunks, then holds the last action.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .base import PolicyError

__all__ = ["JointPlanPlayer", "StepRecorder", "commands_to_actions"]

_SUCTION_ON = ("activate_suction", "attach")


def commands_to_actions(
    events: Sequence[Sequence[Any]], start_target: Sequence[float], start_suction: bool = False
) -> np.ndarray:
    """One joint-position action per recorded ``step`` event.

    Args:
        events: ``[name, args]`` events (``command``, ``activate_suction``, ``attach``,
            ``release``, ``break_overloaded_suction``, ``step``).
        start_target: Arm joint targets before the first ``command`` (the start state's).
        start_suction: Whether suction is on at the start.

    Returns:
        ``float64 (N, 8)``: 7 joint targets and suction (1.0 / 0.0) per control step, plus
        one last action when suction changed after the last step (a grasp primitive turns
        suction on at its end: the next step grips).

    Raises:
        PolicyError: An unknown event (a corrupt trajectory file).
    """
    target = [float(x) for x in start_target][:7]
    suction = bool(start_suction)
    rows: list[list[float]] = []
    for tag, args in events:
        if tag == "command":
            target = [float(x) for x in args[0]][:7]
        elif tag in _SUCTION_ON:
            suction = True
        elif tag == "release":
            suction = False
        elif tag == "step":
            rows.append([*target, 1.0 if suction else 0.0])
        elif tag != "break_overloaded_suction":  # suction stays on when a weld breaks
            raise PolicyError(f"unknown recorded command {tag!r}; the trajectory is corrupt")
    last_suction = rows[-1][7] > 0.5 if rows else bool(start_suction)
    if suction != last_suction:
        rows.append([*target, 1.0 if suction else 0.0])
    return np.asarray(rows, dtype=np.float64).reshape(-1, 8)


class StepRecorder:
    """Executor observer (:class:`~simjudge.skills.observers.SubtaskObserver`) recording actions.

    After every executed control step it appends the joint target commanded last and the
    suction state. Primitive subtasks record their own command log; for the others the
    recorder turns recording on from :meth:`start` to :meth:`finish`. Look-ahead steps
    (sampling MPC) are not reported to observers, and the command issued for the executed
    step is the last one before it, so only the executed trajectory is kept.

    Attributes:
        actions: ``(8,)`` actions, one per executed step.
        start_state: The env state when the first subtask started.
        end_state: The env state when the last subtask finished.
        frameskip: The executor env's physics steps per control step.
    """

    def __init__(self) -> None:
        self.actions: list[np.ndarray] = []
        self.start_state: Any = None
        self.end_state: Any = None
        self.frameskip = 0
        self._env: Any = None
        self._stack = contextlib.ExitStack()
        self._seen = 0
        self._target = np.zeros(7)

    def start(self, env: Any, index: int, subtask: Any) -> None:
        """Begin a subtask (record commands unless the primitive runner does)."""
        if self.start_state is None:
            self.start_state, self.frameskip = env.get_state(), int(env.frameskip)
        self._env, self._seen = env, 0
        self._target = np.asarray(env.scene.robot.arm_qpos(), dtype=np.float64)
        if subtask.kind != "primitive" and env.scene.robot.command_log is None:
            self._stack.enter_context(env.record_commands())

    def on_step(self) -> None:
        """Record the executed step's target and suction state."""
        robot = self._env.scene.robot
        log = robot.command_log or []
        for tag, args in reversed(log[self._seen:]):
            if tag == "command":
                self._target = np.asarray(args[0], dtype=np.float64)[:7]
                break
        self._seen = len(log)
        self.actions.append(np.append(self._target, 1.0 if robot.suction_on else 0.0))

    def finish(self, folder: Path) -> dict[str, Any]:
        """Stop recording this subtask."""
        self.end_state = self._env.get_state()
        self._stack.close()
        self._stack = contextlib.ExitStack()
        return {"recorded_steps": len(self.actions)}


class JointPlanPlayer:
    """Plays ``(N, 8)`` joint-position actions in chunks, then holds the last one.

    Args:
        chunk: Actions per :meth:`next_chunk` (the policy's query period).
    """

    def __init__(self, chunk: int = 8) -> None:
        if chunk < 1:
            raise PolicyError(f"chunk must be >= 1 action, got {chunk}")
        self.chunk = int(chunk)
        self.plan = np.zeros((0, 8))
        self._next = 0

    def load(self, plan: np.ndarray) -> None:
        """Start playing ``plan`` from its first action."""
        plan = np.asarray(plan, dtype=np.float64).reshape(-1, 8)
        if len(plan) == 0:
            raise PolicyError("the joint plan is empty: the skill or solution executed no steps")
        self.plan, self._next = plan, 0

    @property
    def finished(self) -> bool:
        """Whether every planned action was played."""
        return self._next >= len(self.plan)

    def next_chunk(self) -> np.ndarray:
        """The next ``chunk`` planned actions; once played out, the last action (hold)."""
        if len(self.plan) == 0:
            raise PolicyError("act() called before reset(task, seed): no plan is loaded")
        if self.finished:
            return self.plan[-1:].copy()
        out = self.plan[self._next:self._next + self.chunk].copy()
        self._next += len(out)
        return out
