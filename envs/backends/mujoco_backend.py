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

Modules: this one holds the world's lifecycle, loading, state and snapshots;
:mod:`.mujoco_actuation` the servo and model parameters, :mod:`.mujoco_suction` the
welds, :mod:`.mujoco_queries` contacts, closest points, Jacobian and IK,
:mod:`.mujoco_reads` the batched reads, :mod:`.mujoco_render` the renderers.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .base import (
    BackendError,
    BatchSlices,
    BodyQuery,
    CameraSpec,
    JointInfo,
    RenderResult,
)
from .mjcf import pybullet_data_dir
from .mujoco_actuation import MuJoCoActuation
from .mujoco_queries import MuJoCoQueries
from .mujoco_reads import ReadPlan, all_geom_boxes
from .mujoco_render import OffscreenRenderers
from .mujoco_suction import MuJoCoSuction
from .mujoco_world import BodyRecord, WorldLayout, box_record, urdf_record, world_xml

__all__ = ["MuJoCoBackend"]

os.environ.setdefault("MUJOCO_GL", "egl")

_STATE_SPEC_NAMES = ("mjSTATE_QPOS", "mjSTATE_QVEL", "mjSTATE_ACT", "mjSTATE_WARMSTART", "mjSTATE_TIME")


def _import_mujoco():
    try:
        import mujoco
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise BackendError(
            "the mujoco backend needs the `mujoco` package, which is not installed: pip install 'simjudge[mujoco]'"
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


class MuJoCoBackend(MuJoCoActuation, MuJoCoSuction, MuJoCoQueries):
    """A headless MuJoCo world.

    Args:
        timestep: Physics timestep in seconds.
        gravity: Gravity along z.
    """

    name = "mujoco"
    """The registry name, recorded with results."""

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
        self._servo_plan: tuple[Any, ...] | None = None  # MuJoCoActuation._make_servo_plan
        self._welds: dict[int, tuple[int, float, tuple]] = {}  # handle -> (slot, max force, links)
        self._next_constraint = 0
        self._states: dict[int, tuple] = {}
        self._next_state = 0
        self._kinematics_fresh = False
        self._version = 0
        self._static_version = 0  # bumped when world-welded geoms may have moved
        self._memo: dict[Any, tuple] = {}
        self._plans: dict[int, tuple] = {}  # id(queries) -> (queries, layout, ReadPlan)
        self._slices = BatchSlices()  # the robot's read: a slice of the scene's batch
        self._renderers = OffscreenRenderers(self._mj)
        self._jac_buffer: np.ndarray | None = None
        self._jacobian_plans = {}
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
        lo, hi = self._all_geom_boxes()
        return lo[geoms], hi[geoms]

    def _all_geom_boxes(self) -> tuple[np.ndarray, np.ndarray]:
        """World AABBs of every geom in this state (one pass, memoised per state)."""
        boxes = self._memo.get("boxes")
        if boxes is None:
            model, data, _ = self._fresh()
            boxes = self._memo["boxes"] = all_geom_boxes(model, data)
        return boxes

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
            part = self._part(queries[0])
            if part is not None:
                return part
        model, data, layout = self._fresh()
        plan = self._plans.get(key)
        if plan is None or plan[0] is not queries or plan[1] is not layout:
            for query in queries:
                self._record(query.body)
            plan = self._plans[key] = (queries, layout, ReadPlan(model, layout, queries))
        reading = plan[2].read(model, data, self._static_version)
        reading.setflags(write=False)
        self._memo[key] = (queries, reading)
        self._slices.note(queries)
        return reading

    def _part(self, query: BodyQuery) -> np.ndarray | None:
        """``query``'s slice of a batch read in this state (made on first ask, then memoised)."""
        key = ("part", id(query))
        part = self._memo.get(key)
        if part is not None and part[0] is query:
            return part[1]
        sliced = self._slices.slice(query, self._batch_reading)
        if sliced is not None:
            self._memo[key] = (query, sliced)
        return sliced

    def _batch_reading(self, queries: Sequence[BodyQuery]) -> np.ndarray | None:
        """The reading of ``queries`` made in this state, or None."""
        hit = self._memo.get(id(queries))
        return hit[1] if hit is not None and hit[0] is queries else None

    # actuation: MuJoCoActuation (servo, joint friction, limits, model parameters)
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

    # suction welds: MuJoCoSuction; contacts and queries: MuJoCoQueries (closest points,
    # contacts, Jacobian, IK, shapes)
    def update_collisions(self) -> None:
        """Bring kinematics up to date (queries here are always computed from current poses)."""
        self._fresh()

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
