"""Suction welds of the MuJoCo backend: a pool of weld equality constraints with a force bound.

A mixin of :class:`~simjudge.envs.backends.mujoco_backend.MuJoCoBackend`. Suction is a weld
equality constraint with the same force bound as PyBullet's: in a physics step in which the
weld carries more than ``max_force`` it slips (re-anchors at the current relative pose), so
an overloaded weld drifts and the robot's release rule lets go.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .base import BackendError
from .mujoco_world import WELD_SLOTS, BodyIndex, WorldLayout

__all__ = ["MuJoCoSuction"]


class MuJoCoSuction:
    """Weld constraints for suction (mixed into the backend)."""

    _mj: Any
    _model: Any
    _data: Any
    _welds: dict[int, tuple[int, float, tuple]]
    _next_constraint: int

    def _index(self, body: int) -> BodyIndex:  # pragma: no cover - provided by the backend
        raise NotImplementedError

    def _fresh(self) -> tuple[Any, Any, WorldLayout]:  # pragma: no cover - provided by the backend
        raise NotImplementedError

    def _bound_welds(self) -> None:
        """Let an overloaded weld slip: it re-anchors where the held link is now.

        A weld whose linear force exceeded its bound in the last step takes the
        current relative pose as its new rest pose, so it never pulls back harder
        than the bound allows and the drift accumulates: the robot's release rule
        (stretch from the pose at grasp time) then lets go, as on PyBullet. A weld
        whose torque exceeded the same bound (in N·m: PyBullet's fixed constraint
        clamps its angular rows at the same ``maxForce`` as its linear ones) takes
        only the current relative orientation: the part turns in the cup and its
        position anchor stays. The weld's rotational rows carry twice the torque
        (MuJoCo's quaternion-error rows; ``tests/envs/backends/test_mujoco_weld_bound.py``).
        """
        data, model = self._data, self._model
        nefc = data.nefc
        equality = int(self._mj.mjtConstraint.mjCNSTR_EQUALITY)
        rows_type, rows_id = data.efc_type[:nefc], data.efc_id[:nefc]
        kinematics = False
        for slot, max_force, _ in self._welds.values():
            rows = np.nonzero((rows_type == equality) & (rows_id == slot))[0]
            if len(rows) < 6:
                continue
            force = float(np.linalg.norm(data.efc_force[rows[:3]])) > max_force
            torque = 0.5 * float(np.linalg.norm(data.efc_force[rows[3:6]])) > max_force
            if force or torque:
                if not kinematics:
                    self._mj.mj_kinematics(model, data)
                    kinematics = True
                pose = self._relative_pose(int(model.eq_obj1id[slot]), int(model.eq_obj2id[slot]))
                if force:
                    model.eq_data[slot, 3:10] = pose
                else:  # only the torque: the held link turns in the cup, its anchor stays
                    model.eq_data[slot, 6:10] = pose[3:]

    def _relative_pose(self, b1: int, b2: int) -> np.ndarray:
        """Position (3) and ``(w, x, y, z)`` orientation (4) of body ``b2`` in body ``b1``'s frame."""
        data = self._data
        rel_pos = data.xmat[b1].reshape(3, 3).T @ (data.xpos[b2] - data.xpos[b1])
        q1_inv = np.zeros(4)
        self._mj.mju_negQuat(q1_inv, data.xquat[b1])
        rel_quat = np.zeros(4)
        self._mj.mju_mulQuat(rel_quat, q1_inv, data.xquat[b2])
        return np.concatenate([rel_pos, rel_quat])

    def create_fixed_constraint(self, parent_body: int, parent_link: int, child_body: int, child_link: int,
                                max_force: float = 500.0) -> int:
        """Weld two links in their current relative pose (a pooled weld equality)."""
        used = {slot for slot, _, _ in self._welds.values()}
        free = [slot for slot in range(WELD_SLOTS) if slot not in used]
        if not free:
            raise BackendError(f"all {WELD_SLOTS} MuJoCo weld slots are in use; remove a constraint first")
        pidx, cidx = self._index(parent_body), self._index(child_body)
        model, data, _ = self._fresh()
        b1, b2 = int(pidx.bodies[parent_link + 1]), int(cidx.bodies[child_link + 1])
        slot = free[0]
        model.eq_obj1id[slot], model.eq_obj2id[slot] = b1, b2
        model.eq_data[slot, :11] = (0.0, 0.0, 0.0, *self._relative_pose(b1, b2), 1.0)
        data.eq_active[slot] = 1
        handle = self._next_constraint
        self._next_constraint += 1
        self._welds[handle] = (slot, float(max_force), ((parent_body, parent_link), (child_body, child_link)))
        return handle

    def remove_constraint(self, constraint: int) -> None:
        """Deactivate a weld."""
        entry = self._welds.pop(constraint, None)
        if entry is None:
            raise BackendError(f"no constraint {constraint} in this MuJoCo world")
        if self._data is not None:
            self._data.eq_active[entry[0]] = 0
