"""Geometric queries of the MuJoCo backend: contacts, closest points, Jacobian, IK, shapes.

A mixin of :class:`~simjudge.envs.backends.mujoco_backend.MuJoCoBackend`, kept apart so
each module stays readable: everything here reads the compiled model and the current
kinematics and changes nothing in the simulated state.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .base import CollisionShape, Contact
from .kinematics import dls_inverse_kinematics
from .mujoco_world import BodyIndex, WorldLayout

__all__ = ["MuJoCoQueries"]

_KINDS = {6: "box", 5: "cylinder", 2: "sphere", 3: "capsule", 7: "mesh"}


def as_slice(index: np.ndarray) -> np.ndarray | slice:
    """``index`` as a slice when it is a contiguous ascending run (views instead of copies)."""
    if len(index) and np.array_equal(index, np.arange(index[0], index[0] + len(index))):
        return slice(int(index[0]), int(index[0]) + len(index))
    return index


def _xyzw(wxyz: np.ndarray) -> np.ndarray:
    return wxyz[..., [1, 2, 3, 0]]


class MuJoCoQueries:
    """Queries over a compiled MuJoCo world (mixed into the backend, which provides the state)."""

    _mj: Any
    _model: Any
    _data: Any
    _layout: WorldLayout | None
    _jac_buffer: np.ndarray | None
    _jacobian_plans: dict[tuple[int, int], tuple[Any, ...]]
    """(body, link) -> what :meth:`jacobian` reuses while the world is the same (see
    :meth:`_jacobian_plan`)."""
    _scratch_data: Any = None

    def _index(self, body: int) -> BodyIndex:  # pragma: no cover - provided by the backend
        raise NotImplementedError

    def _fresh(self) -> tuple[Any, Any, WorldLayout]:  # pragma: no cover - provided by the backend
        raise NotImplementedError

    def _all_geom_boxes(self) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover
        raise NotImplementedError

    def _contact(self, g1: int, g2: int, pos_a, pos_b, normal, dist: float, force: float) -> Contact:
        layout = self._layout
        assert layout is not None
        return Contact(int(layout.geom_handle[g1]), int(layout.geom_link[g1]), int(layout.geom_handle[g2]),
                       int(layout.geom_link[g2]), np.asarray(pos_a), np.asarray(pos_b),
                       np.asarray(normal), float(dist), float(force))

    def contacts(self, body_a: int, body_b: int | None = None, link_a: int | None = None) -> list[Contact]:
        """Contacts of the last step that involve ``body_a``."""
        self._index(body_a)
        model, data, layout = self._fresh()
        found = []
        force = np.zeros(6)
        for i in range(data.ncon):
            con = data.contact[i]
            g1, g2 = int(con.geom1), int(con.geom2)
            if layout.geom_handle[g1] != body_a:
                if layout.geom_handle[g2] != body_a:
                    continue
                g1, g2, sign = g2, g1, -1.0
            else:
                sign = 1.0
            if body_b is not None and layout.geom_handle[g2] != body_b:
                continue
            if link_a is not None and layout.geom_link[g1] != link_a:
                continue
            normal = con.frame[:3] * sign  # from the (new) first geom to the second
            self._mj.mj_contactForce(model, data, i, force)
            half = normal * con.dist / 2.0
            found.append(self._contact(g1, g2, con.pos - half, con.pos + half, -normal, con.dist, force[0]))
        return found

    def closest_points(self, body_a: int, body_b: int, max_distance: float,
                       link_a: int | None = None, link_b: int | None = None) -> list[Contact]:
        """Geom pairs closer than ``max_distance`` (MuJoCo's ``mj_geomDistance``)."""
        idx_a, idx_b = self._index(body_a), self._index(body_b)
        model, data, _ = self._fresh()
        geoms_a = idx_a.all_geoms if link_a is None else idx_a.geoms[link_a + 1]
        geoms_b = idx_b.all_geoms if link_b is None else idx_b.geoms[link_b + 1]
        if not len(geoms_a) or not len(geoms_b):
            return []
        lo, hi = self._all_geom_boxes()
        lo_a, hi_a, lo_b, hi_b = lo[geoms_a], hi[geoms_a], lo[geoms_b], hi[geoms_b]
        # broad phase: pairs whose boxes come within max_distance (array methods, not the
        # np.all / np.nonzero wrappers: most calls, e.g. suction's search, find nothing)
        near = ((lo_a[:, None, :] <= hi_b[None, :, :] + max_distance)
                & (lo_b[None, :, :] <= hi_a[:, None, :] + max_distance)).all(axis=2)
        if not near.any():
            return []
        found = []
        fromto = np.zeros(6)
        weld = model.body_weldid
        bodies = model.geom_bodyid
        for i, j in zip(*near.nonzero(), strict=True):
            g1, g2 = int(geoms_a[i]), int(geoms_b[j])
            if g1 == g2 or (body_a == body_b and weld[bodies[g1]] == weld[bodies[g2]]):
                continue
            dist = self._mj.mj_geomDistance(model, data, g1, g2, float(max_distance), fromto)
            if dist >= max_distance:
                continue
            pa, pb = fromto[:3].copy(), fromto[3:].copy()
            gap = pa - pb
            norm = float(np.linalg.norm(gap))
            normal = gap / norm * (1.0 if dist >= 0 else -1.0) if norm > 1e-12 else np.array([0.0, 0.0, 1.0])
            found.append(self._contact(g1, g2, pa, pb, normal, dist, 0.0))
        return found

    def _point_jacobian(self, model, data, body_id: int, dofs: np.ndarray) -> np.ndarray:
        buffer = self._jac_buffer
        if buffer is None or buffer.shape[1] != model.nv:
            buffer = self._jac_buffer = np.zeros((6, model.nv))
        self._mj.mj_jac(model, data, buffer[:3], buffer[3:], data.xpos[body_id], body_id)
        return buffer[:, dofs]

    def jacobian(self, body: int, link: int, positions: np.ndarray) -> np.ndarray:
        """Geometric Jacobian of the link frame origin over the movable joints at ``positions``."""
        model, data, layout = self._fresh()
        plan = self._jacobian_plans.get((body, link))
        if plan is None or plan[0] is not layout:
            plan = self._jacobian_plans[body, link] = self._jacobian_plan(model, data, layout, body, link)
        _, qpos, adr, dofs, body_id, point, buffer, rows = plan
        current = qpos[adr]
        # the common case (the joints now, e.g. from a reading of this state): no copy of the world
        if type(positions) is np.ndarray and positions.shape == current.shape \
                and current.tolist() == positions.tolist():  # per item as np.equal, cheaper
            self._mj.mj_jac(model, data, rows[0], rows[1], point, body_id)
            return buffer[:, dofs].copy()  # the buffer is reused: callers keep their own
        idx = self._index(body)
        adr = idx.qpos[idx.movable]
        q = np.asarray(positions, float)
        if np.array_equal(data.qpos[adr], q):
            return self._point_jacobian(model, data, body_id, idx.dofs[idx.movable])
        scratch = self._scratch()
        scratch.qpos[:] = data.qpos
        scratch.qpos[adr] = q
        self._mj.mj_kinematics(model, scratch)
        self._mj.mj_comPos(model, scratch)
        return self._point_jacobian(model, scratch, int(idx.bodies[link + 1]), idx.dofs[idx.movable])

    def _jacobian_plan(self, model, data, layout, body: int, link: int) -> tuple[Any, ...]:
        """What :meth:`jacobian` reuses while the world is the same: addresses and views.

        The views (joint positions, the link frame's origin, a Jacobian buffer and its
        translation and rotation rows) stay valid while ``data`` does, which the layout's
        identity tracks (a rebuilt world has a new layout).
        """
        idx = self._index(body)
        body_id = int(idx.bodies[link + 1])
        buffer = np.empty((6, model.nv))
        return (layout, data.qpos, as_slice(idx.qpos[idx.movable]), as_slice(idx.dofs[idx.movable]),
                body_id, data.xpos[body_id], buffer, (buffer[:3], buffer[3:]))

    def _scratch(self):
        scratch = getattr(self, "_scratch_data", None)
        if scratch is None or scratch.qpos.shape != self._data.qpos.shape:
            scratch = self._scratch_data = self._mj.MjData(self._model)
        return scratch

    def inverse_kinematics(self, body: int, link: int, position, orientation, lower, upper, rest,
                           max_iterations: int = 20, threshold: float = 1e-4) -> np.ndarray:
        """Damped-least-squares IK from the current joints with a null-space pull to ``rest``."""
        idx = self._index(body)
        model, data, _ = self._fresh()
        scratch = self._scratch()
        scratch.qpos[:] = data.qpos
        adr, dofs = idx.qpos[idx.movable], idx.dofs[idx.movable]
        body_id = int(idx.bodies[link + 1])
        mj = self._mj

        def kinematics(q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            scratch.qpos[adr] = q
            mj.mj_kinematics(model, scratch)
            mj.mj_comPos(model, scratch)
            jac = self._point_jacobian(model, scratch, body_id, dofs)
            return scratch.xpos[body_id].copy(), scratch.xmat[body_id].reshape(3, 3).copy(), jac

        return dls_inverse_kinematics(kinematics, data.qpos[adr], position, orientation, lower, upper,
                                      rest, max_iterations, threshold)

    def collision_shapes(self, body: int, link: int) -> list[CollisionShape]:
        """Collision geoms of a link in world coordinates."""
        idx = self._index(body)
        model, data, _ = self._fresh()
        shapes = []
        for geom in idx.geoms[link + 1]:
            kind = _KINDS.get(int(model.geom_type[geom]), "unknown")
            size = model.geom_size[geom]
            dims: tuple[float, ...] = (1.0, 1.0, 1.0)
            if kind == "box":
                dims = tuple(float(s) for s in size)
            elif kind in ("cylinder", "capsule"):
                dims = (float(size[0]), 2.0 * float(size[1]))
            elif kind == "sphere":
                dims = (float(size[0]),)
            quat = np.zeros(4)
            self._mj.mju_mat2Quat(quat, data.geom_xmat[geom])
            shapes.append(CollisionShape(kind, dims, data.geom_xpos[geom].copy(), _xyzw(quat)))
        return shapes
