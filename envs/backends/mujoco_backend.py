"""MuJoCo implementation of :class:`~simjudge.envs.backends.base.Backend`.

Assets are converted from URDF by simjudge (:mod:`~simjudge.envs.backends.mjcf`)
and composed into one world model (:mod:`~simjudge.envs.backends.mujoco_world`),
compiled again when a body is loaded. Conventions that differ from MuJoCo's own:
quaternions are ``(x, y, z, w)`` at the protocol, link ``i`` is the child of
URDF joint ``i``, and a base pose is the base link frame.

Joint position control is PyBullet's servo on MuJoCo actuators: before each
physics step the actuator torque is the one that reaches the velocity target
``gain · (target − q) / dt`` in that step (through the driven joints' full
inertia matrix, plus gravity and Coriolis forces), clipped to the force bound.
Why not MuJoCo's ``kp``/``kv`` position actuators: with the stiffness PyBullet's
servo has, their force saturates on the explicit estimate before the implicit
damping acts, and the arm lags centimetres behind. Suction is a weld equality constraint
with the same force bound as PyBullet's: in a physics step in which the weld
carries more than ``max_force`` it slips (re-anchors at the current relative
pose), so an overloaded weld drifts and the robot's release rule lets go.

Rendering is offscreen OpenGL: ``MUJOCO_GL`` is ``egl`` unless set (``osmesa``
also works; Debian packages ``libegl1`` / ``libosmesa6``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .base import (
    BackendError,
    BodyQuery,
    CameraSpec,
    JointInfo,
    RenderResult,
)
from .mjcf import pybullet_data_dir
from .mujoco_queries import MuJoCoQueries
from .mujoco_reads import ReadPlan, geom_boxes
from .mujoco_render import OffscreenRenderers
from .mujoco_world import WELD_SLOTS, BodyRecord, WorldLayout, box_record, urdf_record, world_xml

__all__ = ["MuJoCoBackend"]

os.environ.setdefault("MUJOCO_GL", "egl")

_STATE_SPEC_NAMES = ("mjSTATE_QPOS", "mjSTATE_QVEL", "mjSTATE_ACT", "mjSTATE_WARMSTART", "mjSTATE_TIME")


def _import_mujoco():
    try:
        import mujoco
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise BackendError(
            "the mujoco backend needs the `mujoco` package (≥ 3); install it with `pip install mujoco`"
        ) from exc
    return mujoco


def _xyzw(wxyz: np.ndarray) -> np.ndarray:
    return wxyz[..., [1, 2, 3, 0]]


def _wxyz(xyzw) -> np.ndarray:
    x, y, z, w = (float(v) for v in xyzw)
    return np.array([w, x, y, z])


def _frozen(*arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    for array in arrays:
        array.setflags(write=False)
    return arrays


class MuJoCoBackend(MuJoCoQueries):
    """A headless MuJoCo world.

    Args:
        timestep: Physics timestep in seconds.
        gravity: Gravity along z.
    """

    def __init__(self, timestep: float = 0.01, gravity: float = -9.81) -> None:
        self._mj = _import_mujoco()
        self.timestep = float(timestep)
        self._gravity = float(gravity)
        self._records: dict[int, BodyRecord] = {}
        self._next_handle = 0
        self._excluded: set[tuple[str, str]] = set()
        self._model: Any = None
        self._data: Any = None
        self._layout: WorldLayout | None = None
        self._dirty = True
        self._params: dict[tuple, tuple] = {}  # model edits replayed after a compile
        self._servo: dict[tuple[int, int], list] = {}  # (body, joint) -> [gain, force, target, row]
        self._servo_arrays: tuple[Any, ...] | None = None
        self._servo_fast: dict[int, tuple[Any, ...]] = {}  # body -> (joints, forces, gain, arrays, rows)
        self._servo_buffers: tuple[np.ndarray, np.ndarray] | None = None
        self._welds: dict[int, tuple[int, float, tuple]] = {}  # handle -> (slot, max force, links)
        self._next_constraint = 0
        self._states: dict[int, tuple] = {}
        self._next_state = 0
        self._kinematics_fresh = False
        self._version = 0
        self._static_version = 0  # bumped when world-welded geoms may have moved
        self._memo: dict[Any, tuple] = {}
        self._plans: dict[int, tuple] = {}  # id(queries) -> (queries, layout, ReadPlan)
        self._renderers = OffscreenRenderers(self._mj)
        self._jac_buffer: np.ndarray | None = None
        self._closed = False
        self._compile()

    # lifecycle -------------------------------------------------------------------
    def reset_world(self) -> None:
        """Remove every body and constraint."""
        self._records.clear()
        self._next_handle = 0
        self._excluded.clear()
        self._params.clear()
        self._servo.clear()
        self._invalidate_servo()
        self._welds.clear()
        self._states.clear()
        self._dirty = True
        self._compile()

    def close(self) -> None:
        """Free the renderers and the model (idempotent)."""
        self._renderers.close()
        self._model = self._data = None
        self._closed = True

    @property
    def model(self) -> Any:
        """The compiled ``MjModel`` (compiled now if bodies were loaded since)."""
        self._ensure()
        return self._model

    @property
    def data(self) -> Any:
        """The live ``MjData``."""
        self._ensure()
        return self._data

    def _ensure(self) -> None:
        if self._closed:
            raise BackendError("this MuJoCo backend is closed; create a new one")
        if self._dirty:
            self._compile()

    def _compile(self) -> None:
        """Compile the world; carry joint states, model edits and welds over."""
        mj = self._mj
        records = [self._records[h] for h in sorted(self._records)]
        xml = world_xml(records, self.timestep, self._gravity, self._excluded)
        try:
            model = mj.MjModel.from_xml_string(xml)
        except ValueError as exc:
            raise BackendError(f"MuJoCo could not compile the world: {exc}") from exc
        data = mj.MjData(model)
        layout = WorldLayout(model, records)
        old_data, old_layout = self._data, self._layout
        weld_data = {slot: self._model.eq_data[slot].copy() for slot, _, _ in self._welds.values()}
        if old_data is not None and old_layout is not None:
            for handle, new in layout.index.items():
                old = old_layout.index.get(handle)
                if old is not None:
                    self._copy_body_state(old_data, old, data, new)
        self._model, self._data, self._layout = model, data, layout
        self._static_version += 1
        self._dirty = False
        self._renderers.close()
        self._invalidate_servo()
        for key, value in list(self._params.items()):
            self._apply_param(key, value)
        for slot, _, links in self._welds.values():  # body ids may have moved: re-resolve
            parent, child = (int(layout.index[h].bodies[link + 1]) for h, link in links)
            model.eq_obj1id[slot], model.eq_obj2id[slot] = parent, child
            model.eq_data[slot] = weld_data[slot]
            data.eq_active[slot] = 1
        self._changed()

    @staticmethod
    def _copy_body_state(old_data, old, data, new) -> None:
        if old.free_qpos >= 0:
            data.qpos[new.free_qpos:new.free_qpos + 7] = old_data.qpos[old.free_qpos:old.free_qpos + 7]
            data.qvel[new.free_dof:new.free_dof + 6] = old_data.qvel[old.free_dof:old.free_dof + 6]
        mask = old.qpos >= 0
        data.qpos[new.qpos[mask]] = old_data.qpos[old.qpos[mask]]
        data.qvel[new.dofs[mask]] = old_data.qvel[old.dofs[mask]]
        acts = old.actuators >= 0
        data.ctrl[new.actuators[acts]] = old_data.ctrl[old.actuators[acts]]

    def _changed(self) -> None:
        """The state changed: kinematics and memoised reads are stale."""
        self._kinematics_fresh = False
        self._version += 1
        self._memo.clear()

    def _fresh(self) -> tuple[Any, Any, WorldLayout]:
        """Model, data with current kinematics, layout."""
        self._ensure()
        if not self._kinematics_fresh:
            self._mj.mj_kinematics(self._model, self._data)
            self._mj.mj_comPos(self._model, self._data)
            self._kinematics_fresh = True
        assert self._layout is not None
        return self._model, self._data, self._layout

    def _record(self, body: int) -> BodyRecord:
        record = self._records.get(body)
        if record is None:
            raise BackendError(f"no body with handle {body} in this MuJoCo world; bodies are {sorted(self._records)}")
        return record

    def _index(self, body: int):
        self._record(body)
        self._ensure()
        assert self._layout is not None
        return self._layout.index[body]

    # loading ---------------------------------------------------------------------
    def load_urdf(self, path, position=(0.0, 0.0, 0.0), orientation=(0.0, 0.0, 0.0, 1.0),
                  fixed_base: bool = False, scale: float = 1.0) -> int:
        """Load a URDF through its cached MJCF (``franka_panda/...`` resolves in pybullet_data)."""
        resolved = Path(path)
        if not resolved.is_absolute() and not resolved.is_file():
            resolved = pybullet_data_dir() / resolved
        if not resolved.is_file():
            raise BackendError(f"cannot load URDF {path}: no such file")
        handle = self._next_handle
        try:
            record = urdf_record(handle, resolved, position, _wxyz(orientation), bool(fixed_base), scale)
        except Exception as exc:
            raise BackendError(f"cannot load URDF {path}: {exc}") from exc
        self._add(record)
        return handle

    def add_box(self, half_extents, position, mass: float = 0.0, rgba=(0.6, 0.6, 0.6, 1.0)) -> int:
        """Add a box body; ``mass=0`` makes it static."""
        handle = self._next_handle
        self._add(box_record(handle, half_extents, position, float(mass), rgba))
        return handle

    def _add(self, record: BodyRecord) -> None:
        self._records[record.handle] = record
        self._next_handle += 1
        self._dirty = True
        self._changed()

    def body_handles(self) -> list[int]:
        """Handles of all bodies."""
        return sorted(self._records)

    def joint_infos(self, body: int) -> list[JointInfo]:
        """Joint descriptions from the URDF, one per link, in index order."""
        return self._record(body).infos

    def base_name(self, body: int) -> str:
        """Name of the base link."""
        return self._record(body).base_name

    # state ---------------------------------------------------------------------
    def get_base_pose(self, body: int) -> tuple[np.ndarray, np.ndarray]:
        """Base link frame position and ``(x, y, z, w)`` orientation."""
        idx = self._index(body)
        _, data, _ = self._fresh()
        base = idx.bodies[0]
        return _frozen(data.xpos[base].copy(), _xyzw(data.xquat[base]))  # type: ignore[return-value]

    def set_base_pose(self, body: int, position, orientation) -> None:
        """Teleport the base (a free joint's qpos, or the model pose of a fixed base)."""
        record, idx = self._record(body), self._index(body)
        quat = _wxyz(orientation)
        if idx.free_qpos >= 0:
            data = self._data
            data.qpos[idx.free_qpos:idx.free_qpos + 3] = np.asarray(position, float)
            data.qpos[idx.free_qpos + 3:idx.free_qpos + 7] = quat
            data.qvel[idx.free_dof:idx.free_dof + 6] = 0.0
        else:
            record.pos, record.quat = np.asarray(position, float).copy(), quat
            self._set_param(("base", body), (record.pos, record.quat))
            self._static_version += 1
        self._changed()

    def get_base_velocity(self, body: int) -> tuple[np.ndarray, np.ndarray]:
        """Linear and angular base velocity (world frame)."""
        idx = self._index(body)
        _, data, _ = self._fresh()
        if idx.free_dof < 0:
            return np.zeros(3), np.zeros(3)
        lin = data.qvel[idx.free_dof:idx.free_dof + 3].copy()
        rotation = data.xmat[idx.bodies[0]].reshape(3, 3)
        return lin, rotation @ data.qvel[idx.free_dof + 3:idx.free_dof + 6]

    def get_joint_states(self, body: int, joints: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """Positions and velocities (fixed joints read 0)."""
        idx = self._index(body)
        data = self._data
        adr = idx.qpos[joints]
        dof = idx.dofs[joints]
        q = np.where(adr >= 0, data.qpos[np.maximum(adr, 0)], 0.0)
        v = np.where(dof >= 0, data.qvel[np.maximum(dof, 0)], 0.0)
        return _frozen(q, v)  # type: ignore[return-value]

    def reset_joint_states(self, body: int, joints: list[int], positions, velocities=None) -> None:
        """Teleport joints (fixed joints are skipped, as PyBullet does)."""
        idx = self._index(body)
        data = self._data
        adr, dof = idx.qpos[joints], idx.dofs[joints]
        movable = adr >= 0
        data.qpos[adr[movable]] = np.asarray(positions, float)[movable]
        if velocities is None:
            data.qvel[dof[movable]] = 0.0
        else:
            data.qvel[dof[movable]] = np.asarray(velocities, float)[movable]
        self._changed()

    def get_link_poses(self, body: int, links: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """World link frames (``-1`` = base)."""
        idx = self._index(body)
        _, data, _ = self._fresh()
        ids = idx.bodies[np.asarray(links, dtype=np.int64) + 1]
        return _frozen(data.xpos[ids].copy(), _xyzw(data.xquat[ids]))  # type: ignore[return-value]

    def _geom_boxes(self, geoms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """World AABBs of ``geoms``, from one pass over every geom per state (memoised)."""
        boxes = self._memo.get("boxes")
        if boxes is None:
            model, data, _ = self._fresh()
            boxes = self._memo["boxes"] = geom_boxes(model, data, np.arange(model.ngeom))
        return boxes[0][geoms], boxes[1][geoms]

    def get_aabb(self, body: int, link: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """World AABB of a link's collision geoms, or of the whole body."""
        idx = self._index(body)
        key = ("aabb", body, link)
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        geoms = idx.all_geoms if link is None else idx.geoms[link + 1]
        if len(geoms) == 0:
            _, data, _ = self._fresh()
            point = data.xpos[idx.bodies[0 if link is None else link + 1]].copy()
            hit = _frozen(point, point.copy())
        else:
            lo, hi = self._geom_boxes(geoms)
            hit = _frozen(lo.min(axis=0), hi.max(axis=0))
        self._memo[key] = hit
        return hit  # type: ignore[return-value]

    def read_bodies(self, queries: Sequence[BodyQuery]) -> np.ndarray:
        """Several bodies' state in one vector: a cached :class:`ReadPlan`, memoised per state."""
        key = id(queries)
        hit = self._memo.get(key)
        if hit is not None and hit[0] is queries:
            return hit[1]
        if len(queries) == 1:  # one query of a batch already read in this state: its slice
            part = self._memo.get(("part", id(queries[0])))
            if part is not None and part[0] is queries[0]:
                return part[1]
        model, data, layout = self._fresh()
        plan = self._plans.get(key)
        if plan is None or plan[0] is not queries or plan[1] is not layout:
            for query in queries:
                self._record(query.body)
            plan = self._plans[key] = (queries, layout, ReadPlan(model, layout, queries))
        reading = plan[2].read(model, data, self._static_version)
        reading.setflags(write=False)
        self._memo[key] = (queries, reading)
        if len(queries) > 1:
            for query, (start, end) in zip(queries, plan[2].bounds, strict=True):
                self._memo[("part", id(query))] = (query, reading[start:end])
        return reading

    # actuation --------------------------------------------------------------------
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
            dofs, adr, acts = (_as_slice(table[:, k].astype(np.int64)) for k in (0, 1, 5))
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
        dofs, adr, rate, targets, forces, acts, work = self._servo_setup()
        buffers = self._servo_buffers
        if buffers is None or buffers[0].shape[0] != model.nv:
            buffers = self._servo_buffers = (np.zeros(model.nv), np.zeros(model.nv))
        accel, torque = buffers
        # driven dofs only: the other entries stay 0, so M·accel restricted to the
        # driven dofs is their inertia block times the wanted acceleration
        np.subtract(targets, data.qpos[adr], out=work)
        work *= rate
        work -= data.qvel[dofs]
        work *= 1.0 / self.timestep
        accel[dofs] = work
        self._mj.mj_mulM(model, data, torque, accel)
        accel[dofs] = 0.0
        np.add(torque[dofs], data.qfrc_bias[dofs], out=work)
        work -= data.qfrc_passive[dofs]
        np.clip(work, -forces, forces, out=work)
        data.ctrl[acts] = work

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

    def step(self, n: int = 1) -> None:
        """Advance ``n`` timesteps; an overloaded suction weld slips."""
        mj = self._mj
        self._ensure()
        model, data = self._model, self._data
        if not self._servo and not self._welds:
            mj.mj_step(model, data, nstep=int(n))
        else:
            for _ in range(int(n)):
                mj.mj_step1(model, data)
                if self._servo:
                    self._apply_servo()
                mj.mj_step2(model, data)
                if self._welds:
                    self._bound_welds()
        self._changed()

    def _bound_welds(self) -> None:
        """Let an overloaded weld slip: it re-anchors where the held link is now.

        A weld whose linear force exceeded its bound in the last step takes the
        current relative pose as its new rest pose, so it never pulls back harder
        than the bound allows and the drift accumulates: the robot's release rule
        (stretch from the pose at grasp time) then lets go, as on PyBullet.
        """
        data, model = self._data, self._model
        nefc = data.nefc
        equality = int(self._mj.mjtConstraint.mjCNSTR_EQUALITY)
        rows_type, rows_id = data.efc_type[:nefc], data.efc_id[:nefc]
        kinematics = False
        for slot, max_force, _ in self._welds.values():
            rows = np.nonzero((rows_type == equality) & (rows_id == slot))[0]
            if len(rows) >= 3 and float(np.linalg.norm(data.efc_force[rows[:3]])) > max_force:
                if not kinematics:
                    self._mj.mj_kinematics(model, data)
                    kinematics = True
                model.eq_data[slot, 3:10] = self._relative_pose(int(model.eq_obj1id[slot]), int(model.eq_obj2id[slot]))

    def _relative_pose(self, b1: int, b2: int) -> np.ndarray:
        """Position (3) and ``(w, x, y, z)`` orientation (4) of body ``b2`` in body ``b1``'s frame."""
        data = self._data
        rel_pos = data.xmat[b1].reshape(3, 3).T @ (data.xpos[b2] - data.xpos[b1])
        q1_inv = np.zeros(4)
        self._mj.mju_negQuat(q1_inv, data.xquat[b1])
        rel_quat = np.zeros(4)
        self._mj.mju_mulQuat(rel_quat, q1_inv, data.xquat[b2])
        return np.concatenate([rel_pos, rel_quat])

    # contacts and queries: MuJoCoQueries (closest points, contacts, Jacobian, IK, shapes)
    def update_collisions(self) -> None:
        """Bring kinematics up to date (queries here are always computed from current poses)."""
        self._fresh()

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

    def set_collision_between(self, body_a: int, link_a: int, body_b: int, link_b: int, enabled: bool) -> None:
        """Exclude (or re-include) a body pair from contacts (recompiles the world)."""
        pair = tuple(sorted((f"b{body_a}/link{link_a}", f"b{body_b}/link{link_b}")))
        changed = (pair in self._excluded) == enabled
        if changed:
            (self._excluded.discard if enabled else self._excluded.add)(pair)  # type: ignore[arg-type]
            self._dirty = True
            self._changed()

    # snapshots -----------------------------------------------------------------------
    def _spec(self) -> int:
        spec = 0
        for name in _STATE_SPEC_NAMES:
            spec |= int(getattr(self._mj.mjtState, name))
        return spec

    def save_state(self) -> int:
        """Snapshot qpos, qvel, activations, warm start, time and fixed-base poses."""
        self._ensure()
        mj, model, data = self._mj, self._model, self._data
        spec = self._spec()
        state = np.zeros(mj.mj_stateSize(model, spec))
        mj.mj_getState(model, data, state, spec)
        bases = {k: v for k, v in self._params.items() if k[0] == "base"}
        handle = self._next_state
        self._next_state += 1
        self._states[handle] = (len(self._records), state, bases)
        return handle

    def restore_state(self, state: int) -> None:
        """Restore a snapshot of this world (same bodies as when it was taken)."""
        entry = self._states.get(state)
        if entry is None:
            raise BackendError(f"cannot restore state {state}: no such snapshot in this MuJoCo world")
        n_bodies, values, bases = entry
        if n_bodies != len(self._records):
            raise BackendError(
                f"cannot restore state {state}: it was taken with {n_bodies} bodies, the world has "
                f"{len(self._records)}; snapshots only restore into the world they came from"
            )
        self._ensure()
        self._mj.mj_setState(self._model, self._data, values, self._spec())
        for key, value in bases.items():
            self._records[key[1]].pos, self._records[key[1]].quat = value
            self._set_param(key, value)
        self._static_version += 1
        self._changed()

    def remove_state(self, state: int) -> None:
        """Forget a snapshot."""
        self._states.pop(state, None)

    # rendering -----------------------------------------------------------------------
    def render(self, camera: CameraSpec, depth: bool = False) -> RenderResult:
        """Offscreen RGB (and metric depth and per-pixel body handles) through OpenGL."""
        model, data, layout = self._fresh()
        return self._renderers.render(model, data, layout.body_handle, camera, depth)


def _as_slice(index: np.ndarray) -> np.ndarray | slice:
    """``index`` as a slice when it is a contiguous ascending run (views instead of copies)."""
    if len(index) and np.array_equal(index, np.arange(index[0], index[0] + len(index))):
        return slice(int(index[0]), int(index[0]) + len(index))
    return index
