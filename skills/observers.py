"""What watches a solution while it executes: joint records and the subtask observer contract.

The executor (:func:`~simjudge.skills.executor.execute_solution`) hangs observers on the env's
step hook (:meth:`SimEnv.observe_steps <simjudge.envs.sim_env.SimEnv.observe_steps>`), so they
see every executed control step whichever solver drives the arm (motion-planning primitives,
SAC or MPC rollouts, the oracle) and none of the look-ahead that planners roll back.

* :class:`JointTracker` records every movable joint of every scene object (initial, final
  and largest range fraction reached) and the final pose of every object, so anyone can
  re-check a verdict from ``summary.json`` without re-running.
* :class:`SubtaskObserver` is the contract live judges implement (``simjudge.judges.live``
  provides one with the subtask's own code judges and the task goal's progress judge); the
  executor sits below the judges layer and only knows this protocol.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from simjudge.envs.sim_env import SimEnv
from simjudge.tasks.spec import Subtask

__all__ = ["JointTracker", "SubtaskObserver", "joint_readings", "object_poses"]


class SubtaskObserver(Protocol):
    """Watches one subtask at a time (live judges, recorders).

    The executor calls :meth:`start` before a subtask runs (the env is at the subtask's
    start state), :meth:`on_step` after every executed control step, and :meth:`finish`
    after it ends; what ``finish`` returns is stored in the subtask's verdict under
    ``details["judges"]``.
    """

    def start(self, env: SimEnv, index: int, subtask: Subtask) -> None:
        """Begin watching subtask ``index`` on ``env``."""

    def on_step(self) -> None:
        """One control step was executed."""

    def finish(self, folder: Path) -> dict[str, Any]:
        """Stop watching; write files into ``folder`` and return a JSON-ready summary."""


def joint_readings(env: SimEnv) -> dict[str, dict[str, float]]:
    """``{"<object>/<joint>": {"value": v, "fraction": f}}`` for every movable joint.

    ``fraction`` is the value's position in the joint range (0 = lower limit, the closed or
    natural state; 1 = upper limit).
    """
    view = env.view
    out: dict[str, dict[str, float]] = {}
    for name, obj in env.scene.objects.items():
        for joint in obj.joint_index:
            value = view.joint_value(name, joint)
            lo, hi = view.joint_limit(name, joint)
            span = hi - lo
            fraction = (value - lo) / span if span > 1e-12 else 0.0
            out[f"{name}/{joint}"] = {"value": float(value), "fraction": float(fraction)}
    return out


def object_poses(env: SimEnv) -> dict[str, dict[str, list[float]]]:
    """``{"<object>": {"position": [x, y, z], "orientation": [x, y, z, w]}}`` of every object."""
    view = env.view
    poses = {}
    for name in env.scene.objects:
        pos, orn = view.base_pose(name)
        poses[name] = {"position": [float(v) for v in pos], "orientation": [float(v) for v in orn]}
    return poses


class JointTracker:
    """Initial, final and largest range fraction of every joint over an execution.

    Args:
        env: The env (at the execution's start state).
    """

    def __init__(self, env: SimEnv) -> None:
        self.env = env
        self.initial = joint_readings(env)
        self.maximum = {k: dict(v) for k, v in self.initial.items()}

    def on_step(self) -> None:
        """Fold the current joint fractions into the maxima."""
        for key, reading in joint_readings(self.env).items():
            if reading["fraction"] > self.maximum[key]["fraction"]:
                self.maximum[key] = reading

    def record(self) -> dict[str, Any]:
        """``initial_joints``, ``final_joints``, ``max_joints`` and ``final_poses`` now."""
        self.on_step()
        return {
            "initial_joints": self.initial,
            "final_joints": joint_readings(self.env),
            "max_joints": self.maximum,
            "final_poses": object_poses(self.env),
        }
