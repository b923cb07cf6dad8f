"""Actuation of the MuJoCo backend: PyBullet's position servo, joint friction, limits, model edits.

A mixin of :class:`~simjudge.envs.backends.mujoco_backend.MuJoCoBackend`. Joint position
control is PyBullet's servo on MuJoCo actuators: before each physics step the actuator
torque is the one that reaches the velocity target ``gain · (target − q) / dt`` in that
step (through the driven joints' full inertia matrix, plus gravity and Coriolis forces),
clipped to the force bound. Model edits (friction, damping, limits, fixed-base poses) are
kept as parameters and replayed after every compile of the world.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .base import BackendError
from .mujoco_queries import as_slice
from .mujoco_world import BodyIndex, WorldLayout

__all__ = ["MuJoCoActuation"]


class MuJoCoActuation:
    """Servo, passive friction, limits and model parameters (mixed into the backend)."""

    timestep: float
    _mj: Any
    _model: Any
    _data: Any
    _layout: WorldLayout | None
    _dirty: bool
    _params: dict[tuple, tuple]
    _servo: dict[tuple[int, int], list]
    _servo_arrays: tuple[Any, ...] | None
    _servo_fast: dict[int, tuple[Any, ...]]
    _servo_plan: tuple[Any, ...] | None

    def _index(self, body: int) -> BodyIndex:  # pragma: no cover - provided by the backend
        raise NotImplementedError

    def _set_param(self, key: tuple, value: tuple) -> None:
        self._params[key] = value
        if not self._dirty:
            self._apply_param(key, value)

    def _apply_param(self, key: tuple, value: tuple) -> None:
        model, data = self._model, self._data
        assert self._layout is not None
        kind, body = key[0], key[1]
        idx = self._layout.index.get(body)
        if idx is None:
            return
        if kind == "base":
            model.body_pos[idx.bodies[0]], model.body_quat[idx.bodies[0]] = value
        elif kind == "motor":  # (0,): driven by the servo; (f,): passive with friction f
            act, dof = idx.actuators[key[2]], idx.dofs[key[2]]
            driven = (key[1], key[2]) in self._servo
            model.actuator_gainprm[act, 0] = 1.0 if driven else 0.0
            model.actuator_biasprm[act, :3] = 0.0
            model.actuator_forcerange[act] = (-np.inf, np.inf)
            model.dof_frictionloss[dof] = 0.0 if driven else value[0]
            data.ctrl[act] = 0.0
        elif kind == "limits":
            jid = model.dof_jntid[idx.dofs[key[2]]]
            model.jnt_range[jid] = value
            model.jnt_limited[jid] = 1
        elif kind == "friction":
            model.geom_friction[idx.geoms[key[2] + 1], 0] = value[0]
        elif kind == "damping":
            model.dof_damping[idx.dofs[key[2]]] = value[0]

    def set_joint_position_targets(self, body: int, joints: list[int], positions, forces,
                                   position_gain: float = 0.3) -> None:
        """PyBullet's position servo with bounded force (see the module docstring)."""
        fast = self._servo_fast.get(body)
        if fast is not None and fast[0] is joints and fast[1] is forces and fast[2] == position_gain \
                and fast[3] is self._servo_arrays:  # the same call as last time: new targets only
            targets: Any = fast[3]
            targets[3][fast[4]] = positions
            return
        idx = self._index(body)
        servo = self._servo
        for joint, target, force in zip(joints, np.asarray(positions, float).tolist(),
                                        np.asarray(forces, float).tolist(), strict=True):
            key = (body, joint)
            old = servo.get(key)
            if old is not None and old[0] == position_gain and old[1] == force:
                old[2] = target
                continue
            if idx.dofs[joint] < 0:
                raise BackendError(f"joint {joint} of body {body} is fixed and cannot be driven")
            servo[key] = [float(position_gain), float(force), float(target), -1]
            self._invalidate_servo()
            self._set_param(("motor", body, joint), (0.0,))
        arrays = self._servo_setup()
        rows = np.array([servo[body, joint][3] for joint in joints], dtype=np.int64)
        arrays[3][rows] = [servo[body, joint][2] for joint in joints]
        self._servo_fast[body] = (joints, forces, position_gain, arrays, rows)

    def set_joint_friction(self, body: int, joints: list[int], forces) -> None:
        """Passive joints with dry friction (MuJoCo's ``frictionloss``); motors off."""
        self._index(body)
        for joint, force in zip(joints, np.asarray(forces, float).tolist(), strict=True):
            if (body, joint) in self._servo:
                self._invalidate_servo()
                del self._servo[body, joint]
            self._set_param(("motor", body, joint), (force,))

    def _invalidate_servo(self) -> None:
        """Forget the servo arrays (after keeping their targets in the servo table)."""
        arrays = self._servo_arrays
        if arrays is not None:
            for entry in self._servo.values():
                if entry[3] >= 0:
                    entry[2] = float(arrays[3][entry[3]])
        self._servo_arrays = None
        self._servo_fast.clear()

    def _servo_setup(self) -> tuple[Any, ...]:
        """Arrays of the driven joints: dofs, qpos addresses, gains/dt, targets, forces, actuators.

        Index arrays become slices when contiguous (the arm's joints are), so the
        per-step servo works on views.
        """
        arrays = self._servo_arrays
        if arrays is None:
            layout = self._layout
            assert layout is not None
            rows = []
            for position, ((body, joint), entry) in enumerate(sorted(self._servo.items())):
                idx = layout.index[body]
                entry[3] = position
                rows.append((idx.dofs[joint], idx.qpos[joint], entry[0], entry[2], entry[1], idx.actuators[joint]))
            table = np.array(rows, dtype=np.float64).reshape(-1, 6)
            dofs, adr, acts = (as_slice(table[:, k].astype(np.int64)) for k in (0, 1, 5))
            arrays = self._servo_arrays = (
                dofs, adr, table[:, 2] / self.timestep, table[:, 3].copy(), table[:, 4].copy(), acts,
                np.zeros(len(table)),
            )
        return arrays

    def _apply_servo(self) -> None:
        """Motor torques that reach the servo's velocity target in one step, force-bounded.

        The target velocity is ``gain · (target − q) / dt`` (PyBullet's position
        control); the torque solves the driven joints' inertia (full matrix, so
        arm links' coupling is included) for it, plus gravity and Coriolis forces.
        """
        model, data = self._model, self._data
        arrays = self._servo_setup()
        plan = self._servo_plan
        if plan is None or plan[0] is not arrays or plan[1] is not data:
            plan = self._servo_plan = self._make_servo_plan(arrays)
        dofs, adr, rate, targets, forces, acts, work = arrays
        _, _, negative_forces, accel, torque, reads = plan
        qpos, qvel, bias, passive = reads or (
            data.qpos[adr], data.qvel[dofs], data.qfrc_bias[dofs], data.qfrc_passive[dofs])
        # driven dofs only: the other entries of ``accel`` stay 0, so M·accel restricted to
        # the driven dofs is their inertia block times the wanted acceleration
        np.subtract(targets, qpos, out=work)
        work *= rate
        work -= qvel
        work *= 1.0 / self.timestep
        accel[dofs] = work
        self._mj.mj_mulM(model, data, torque, accel)
        accel[dofs] = 0.0
        np.add(torque[dofs], bias, out=work)
        work -= passive
        # np.clip(work, -forces, forces) as its two ufuncs (its wrapper costs more than both)
        np.maximum(work, negative_forces, out=work)
        np.minimum(work, forces, out=work)
        data.ctrl[acts] = work

    def _make_servo_plan(self, arrays: tuple[Any, ...]) -> tuple[Any, ...]:
        """What the servo reuses while ``arrays`` and the data are the same.

        Why: reading four of the data's arrays at the driven dofs is most of a substep's
        servo cost. When the driven joints' index arrays are slices (the arm's joints
        are contiguous) the reads are views, kept across substeps; otherwise (a fancy
        index copies) they are gathered each substep (``reads`` is ``None``).
        """
        model, data = self._model, self._data
        dofs, adr = arrays[0], arrays[1]
        reads = None
        if isinstance(dofs, slice) and isinstance(adr, slice):
            reads = (data.qpos[adr], data.qvel[dofs], data.qfrc_bias[dofs], data.qfrc_passive[dofs])
        return arrays, data, -arrays[4], np.zeros(model.nv), np.zeros(model.nv), reads

    def set_dynamics(self, body: int, link: int, lateral_friction: float | None = None,
                     joint_damping: float | None = None, linear_damping: float | None = None,
                     angular_damping: float | None = None) -> None:
        """Sliding friction of a link's geoms and joint damping (MuJoCo has no body damping)."""
        self._index(body)
        if lateral_friction is not None:
            self._set_param(("friction", body, link), (float(lateral_friction),))
        if joint_damping is not None and link >= 0 and self._index(body).dofs[link] >= 0:
            self._set_param(("damping", body, link), (float(joint_damping),))

    def set_joint_limits(self, body: int, joint: int, lower: float, upper: float, max_force: float = 1e4) -> None:
        """Hard joint range (MuJoCo limits are constraints, not force-bounded motors)."""
        if self._index(body).dofs[joint] < 0:
            raise BackendError(f"joint {joint} of body {body} is fixed and has no limits")
        self._set_param(("limits", body, joint), (float(lower), float(upper)))
