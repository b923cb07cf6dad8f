"""Batched state reads of the MuJoCo backend (:meth:`Backend.read_bodies` in a few array ops).

Why a plan: a control step reads the same bodies' poses, joints and boxes every time.
A :class:`ReadPlan` turns a batch of :class:`~simjudge.envs.backends.base.BodyQuery`
once into index arrays, so each later reading is one gather from the data arrays plus
one vectorised pass over the geoms' boxes, instead of dozens of small getter calls.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .base import BodyQuery

__all__ = ["ReadPlan", "all_geom_boxes", "geom_boxes"]

_XYZW = np.array([1, 2, 3, 0])
_ZERO = np.zeros(1)
try:  # np.einsum without optimisation is exactly this C function, minus two Python layers
    from numpy._core.multiarray import c_einsum as _EINSUM
except ImportError:  # pragma: no cover - another numpy layout
    _EINSUM = np.einsum
_ABS = np.abs


def geom_boxes(model, data, geoms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """World AABBs (min, max) of ``geoms`` from their local boxes and current frames."""
    return _world_boxes(model.geom_aabb[geoms], data.geom_xmat[geoms], data.geom_xpos[geoms])


def all_geom_boxes(model, data) -> tuple[np.ndarray, np.ndarray]:
    """:func:`geom_boxes` of every geom of the model, bit for bit, without the gathers.

    The full arrays have the layout the gathered copies would have, so the contractions
    run on the same numbers in the same order.
    """
    return _world_boxes(model.geom_aabb, data.geom_xmat, data.geom_xpos)


def _world_boxes(aabb: np.ndarray, xmat: np.ndarray, xpos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """World (min, max) of local boxes ``aabb`` (centre, half sizes) under frames ``xmat``, ``xpos``.

    ``c_einsum`` is what ``np.einsum`` runs without optimisation, minus two Python layers.
    """
    rotation = xmat.reshape(-1, 3, 3)
    centre = xpos + _EINSUM("nij,nj->ni", rotation, aabb[:, :3])
    half = _EINSUM("nij,nj->ni", _ABS(rotation), aabb[:, 3:])
    return centre - half, centre + half


def _chain_qpos(model, bodies: np.ndarray) -> np.ndarray:
    """The qpos addresses of every joint between ``bodies`` and the world (sorted, each once)."""
    widths = {0: 7, 1: 4, 2: 1, 3: 1}  # free, ball, slide, hinge
    addresses: set[int] = set()
    for body in bodies.tolist():
        while body > 0:
            start, count = int(model.body_jntadr[body]), int(model.body_jntnum[body])
            for joint in range(start, start + count):
                adr = int(model.jnt_qposadr[joint])
                addresses.update(range(adr, adr + widths[int(model.jnt_type[joint])]))
            body = int(model.body_parentid[body])
    return np.array(sorted(addresses), dtype=np.int64)


def _as_slice(index: np.ndarray) -> np.ndarray | slice:
    """``index`` as a slice when it is a contiguous ascending run (a view instead of a copy)."""
    if len(index) and np.array_equal(index, np.arange(index[0], index[0] + len(index))):
        return slice(int(index[0]), int(index[0]) + len(index))
    return index


class ReadPlan:
    """Index arrays that assemble one batch's reading from MuJoCo's data arrays.

    The reading is ``source[index]`` where ``source`` concatenates body positions,
    body orientations (already ``x, y, z, w``), joint positions, a zero (fixed joints)
    and the requested boxes' minima and maxima.
    """

    def __init__(self, model, layout, queries: Sequence[BodyQuery]) -> None:
        nbody, nq = model.nbody, model.nq
        quat_base = 3 * nbody
        zero = quat_base + 4 * nbody + nq
        box_base = zero + 1
        index: list[int] = []
        box_geoms: list[np.ndarray] = []
        box_points: list[int] = []  # body id for a box of a link without geoms
        n_boxes = 0

        def add_box(geoms: np.ndarray, body_id: int) -> None:
            nonlocal n_boxes
            box_geoms.append(geoms)
            box_points.append(body_id if len(geoms) == 0 else -1)
            index.extend([-(n_boxes * 2 + 1)] * 3 + [-(n_boxes * 2 + 2)] * 3)  # patched below
            n_boxes += 1

        for query in queries:
            idx = layout.index[query.body]
            if query.base:
                base = int(idx.bodies[0])
                index += [3 * base + k for k in range(3)]
                index += [quat_base + 4 * base + int(k) for k in _XYZW]
            if query.aabb:
                add_box(np.concatenate(idx.geoms), int(idx.bodies[0]))
            for joint in query.joints:
                adr = int(idx.qpos[joint])
                index.append(quat_base + 4 * nbody + adr if adr >= 0 else zero)
            ids = [int(idx.bodies[link + 1]) for link in query.links]
            for body_id in ids:
                index += [3 * body_id + k for k in range(3)]
            for body_id in ids:
                index += [quat_base + 4 * body_id + int(k) for k in _XYZW]
            for link in query.link_aabbs:
                add_box(idx.geoms[link + 1], int(idx.bodies[link + 1]))
        # boxes: minima then maxima, 3 each; patch the placeholders with real offsets
        counters: dict[int, int] = {}
        for position, value in enumerate(index):
            if value < 0:
                box, is_max = divmod(-value - 1, 2)
                k = counters.get(-value, 0)
                counters[-value] = k + 1
                index[position] = box_base + (3 * n_boxes if is_max else 0) + 3 * box + k
        self.index = np.asarray(index, dtype=np.int64)
        self.n_boxes = n_boxes
        lengths = [max(len(g), 1) for g in box_geoms]
        self.starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64) if lengths else np.zeros(0, np.int64)
        flat = [g if len(g) else np.array([0]) for g in box_geoms]
        self.geoms = np.concatenate(flat).astype(np.int64) if flat else np.zeros(0, np.int64)
        self.points = np.asarray(box_points, dtype=np.int64)
        self.point_rows = np.nonzero(self.points >= 0)[0]
        # geoms welded to the world move only when the model is edited (a fixed base
        # teleported): their boxes are kept until ``static_version`` changes
        static = model.body_weldid[model.geom_bodyid[self.geoms]] == 0
        self.static_rows = np.nonzero(static)[0]
        self.moving_rows = np.nonzero(~static)[0]
        self.moving_geoms = self.geoms[self.moving_rows]
        # each moving geom once (a link's geoms are also the whole body's), with its local box
        unique, self._moving_inverse = np.unique(self.moving_geoms, return_inverse=True)
        self._moving_unique = unique.astype(np.int64)
        self._moving_aabb = model.geom_aabb[self._moving_unique]
        self._static: tuple[int, np.ndarray, np.ndarray] | None = None
        # the static boxes, then each moving geom's once; ``_rows`` gathers them in geom order
        n_static = len(self.static_rows)
        self._table_lo = np.zeros((n_static + len(unique), 3))
        self._table_hi = np.zeros((n_static + len(unique), 3))
        self._rows = np.zeros(len(self.geoms), dtype=np.int64)
        self._rows[self.static_rows] = np.arange(n_static)
        self._rows[self.moving_rows] = n_static + self._moving_inverse
        # the boxes are a function of the frames of the bodies that carry the moving geoms (and
        # of the points' bodies), which forward kinematics computes from the positions of the
        # joints between them and the world alone: while those are bit-identical (and the
        # world-welded placement too), so are the boxes
        self.key_bodies = np.unique(
            np.concatenate([model.geom_bodyid[self.moving_geoms], self.points[self.point_rows]])
        ).astype(np.int64)
        addresses = _chain_qpos(model, self.key_bodies)
        self.key_qpos = _as_slice(addresses)
        self._key: list[float] = [0.0] * len(addresses)  # plain floats: list == is numpy's == per item
        self._kept: tuple[int, np.ndarray, np.ndarray] | None = None

    def _boxes(self, model, data, static_version: int) -> tuple[np.ndarray, np.ndarray]:
        table_lo, table_hi = self._table_lo, self._table_hi
        n_static = len(self.static_rows)
        if self._static is None or self._static[0] != static_version:
            static_lo, static_hi = geom_boxes(model, data, self.geoms[self.static_rows])
            table_lo[:n_static], table_hi[:n_static] = static_lo, static_hi
            self._static = (static_version, static_lo, static_hi)
        table_lo[n_static:], table_hi[n_static:] = self._moving_boxes(data)
        rows = self._rows
        return table_lo[rows], table_hi[rows]

    def _moving_boxes(self, data) -> tuple[np.ndarray, np.ndarray]:
        """:func:`geom_boxes` of the moving geoms, each once, with their local boxes kept.

        The same contractions on operands of the same layout as :func:`geom_boxes` (einsum
        may fuse multiply-adds, so an elementwise rewrite would differ in the last bit).
        """
        geoms = self._moving_unique
        return _world_boxes(self._moving_aabb, data.geom_xmat[geoms], data.geom_xpos[geoms])

    def read(self, model, data, static_version: int = -1) -> np.ndarray:
        """The batch's reading in the current state (kinematics must be current).

        ``static_version`` names the placement of world-welded geoms; -1 recomputes them.
        """
        parts = [data.xpos.ravel(), data.xquat.ravel(), data.qpos, _ZERO]
        if self.n_boxes:
            parts += self._box_parts(model, data, static_version)
        return np.concatenate(parts)[self.index]

    def _box_parts(self, model, data, static_version: int) -> list[np.ndarray]:
        """The requested boxes' minima and maxima (flat), kept while nothing they depend on moved.

        What they depend on: the world-welded geoms' placement (``static_version``) and the
        frames of :attr:`key_bodies`, i.e. the joint positions :attr:`key_qpos`; a body that
        sits still (a closed door, a cabinet's drawers) keeps bit-identical joint positions,
        hence the same frames and boxes.
        """
        kept = self._kept
        joints = data.qpos[self.key_qpos].tolist()
        if static_version >= 0 and kept is not None and kept[0] == static_version \
                and joints == self._key:
            return [kept[1], kept[2]]
        if static_version < 0:
            lo, hi = geom_boxes(model, data, self.geoms)
        else:
            lo, hi = self._boxes(model, data, static_version)
        box_lo = np.minimum.reduceat(lo, self.starts, axis=0)
        box_hi = np.maximum.reduceat(hi, self.starts, axis=0)
        if len(self.point_rows):
            points = data.xpos[self.points[self.point_rows]]
            box_lo[self.point_rows] = points
            box_hi[self.point_rows] = points
        box_lo, box_hi = box_lo.ravel(), box_hi.ravel()
        if static_version >= 0:
            self._key = joints
            self._kept = (static_version, box_lo, box_hi)
        return [box_lo, box_hi]
