"""Contacts, closest points, constraints, IK, Jacobian and collision shapes of the PyBullet backend.

A mixin of :class:`~simjudge.envs.backends.pybullet_backend.PyBulletBackend`, kept apart so
each module stays readable; every call goes to the backend's own physics client.
"""

from __future__ import annotations

from itertools import chain
from typing import Any

import numpy as np

from .base import BASE_LINK, CollisionShape, Contact

__all__ = ["PyBulletQueries"]

_SHAPE_KINDS = {2: "sphere", 3: "box", 4: "cylinder", 5: "mesh", 6: "plane", 7: "capsule"}


def _floats(values) -> list[float]:
    """Plain numbers for pybullet (``tolist`` for arrays, lists as they are)."""
    if isinstance(values, np.ndarray):
        return values.ravel().tolist()
    return values if type(values) is list else [float(v) for v in values]


class PyBulletQueries:
    """Geometric queries, constraints and kinematics over one PyBullet client."""

    _p: Any
    _client: int

    def _moved(self) -> None:  # pragma: no cover - provided by PyBulletReads
        raise NotImplementedError

    # contacts and queries ---------------------------------------------------------
    @staticmethod
    def _contact(raw) -> Contact:
        return Contact(
            body_a=raw[1],
            body_b=raw[2],
            link_a=raw[3],
            link_b=raw[4],
            position_a=np.asarray(raw[5]),
            position_b=np.asarray(raw[6]),
            normal_b_to_a=np.asarray(raw[7]),
            distance=float(raw[8]),
            normal_force=float(raw[9]),
        )

    def contacts(self, body_a: int, body_b: int | None = None, link_a: int | None = None):
        """Contacts from the last step involving ``body_a``."""
        kwargs = {"bodyA": body_a, "physicsClientId": self._client}
        if body_b is not None:
            kwargs["bodyB"] = body_b
        if link_a is not None:
            kwargs["linkIndexA"] = link_a
        return [self._contact(raw) for raw in self._p.getContactPoints(**kwargs)]

    def closest_points(self, body_a: int, body_b: int, max_distance: float, link_a=None, link_b=None):
        """Point pairs closer than ``max_distance``, computed now."""
        kwargs = {
            "bodyA": body_a,
            "bodyB": body_b,
            "distance": float(max_distance),
            "physicsClientId": self._client,
        }
        if link_a is not None:
            kwargs["linkIndexA"] = link_a
        if link_b is not None:
            kwargs["linkIndexB"] = link_b
        return [self._contact(raw) for raw in self._p.getClosestPoints(**kwargs)]

    def update_collisions(self) -> None:
        """Refresh broad-phase AABBs after teleporting."""
        self._moved()
        self._p.performCollisionDetection(physicsClientId=self._client)

    def create_fixed_constraint(
        self, parent_body: int, parent_link: int, child_body: int, child_link: int, max_force=500.0
    ) -> int:
        """Weld two links in their current relative pose.

        PyBullet expresses constraint frames relative to each link's centre of
        mass, not its URDF frame, so the relative pose is computed between the
        two COM frames (using URDF frames would start the weld offset by the
        COM offsets and yank the held part).
        """
        p, c = self._p, self._client
        pp, po = self._com_pose(parent_body, parent_link)
        cp, co = self._com_pose(child_body, child_link)
        inv_pp, inv_po = p.invertTransform(pp, po)
        rel_pos, rel_orn = p.multiplyTransforms(inv_pp, inv_po, cp, co)
        cid = p.createConstraint(
            parent_body,
            parent_link,
            child_body,
            child_link,
            p.JOINT_FIXED,
            [0, 0, 0],
            parentFramePosition=rel_pos,
            childFramePosition=[0, 0, 0],
            parentFrameOrientation=rel_orn,
            childFrameOrientation=[0, 0, 0, 1],
            physicsClientId=c,
        )
        p.changeConstraint(cid, maxForce=float(max_force), physicsClientId=c)
        return int(cid)

    def _com_pose(self, body: int, link: int) -> tuple[list[float], list[float]]:
        """World pose of a link's centre-of-mass frame (the base pose is already COM)."""
        p, c = self._p, self._client
        if link == BASE_LINK:
            pos, orn = p.getBasePositionAndOrientation(body, physicsClientId=c)
        else:
            state = p.getLinkState(body, link, computeForwardKinematics=1, physicsClientId=c)
            pos, orn = state[0], state[1]
        return list(pos), list(orn)

    def remove_constraint(self, constraint: int) -> None:
        """Remove a constraint."""
        self._p.removeConstraint(constraint, physicsClientId=self._client)

    def set_collision_between(self, body_a: int, link_a: int, body_b: int, link_b: int, enabled: bool) -> None:
        """Enable or disable collision between two links."""
        self._p.setCollisionFilterPair(
            body_a, body_b, link_a, link_b, int(enabled), physicsClientId=self._client
        )

    def inverse_kinematics(
        self,
        body: int,
        link: int,
        position,
        orientation,
        lower,
        upper,
        rest,
        max_iterations: int = 20,
        threshold: float = 1e-4,
    ) -> np.ndarray:
        """Damped-least-squares IK with null-space bias towards ``rest``."""
        kwargs = {
            "lowerLimits": list(lower),
            "upperLimits": list(upper),
            "jointRanges": [float(h - lo) for lo, h in zip(lower, upper, strict=True)],
            "restPoses": list(rest),
            "maxNumIterations": int(max_iterations),
            "residualThreshold": float(threshold),
            "physicsClientId": self._client,
        }
        if orientation is not None:
            kwargs["targetOrientation"] = list(orientation)
        q = self._p.calculateInverseKinematics(body, link, list(position), **kwargs)
        return np.asarray(q, dtype=np.float64)

    def jacobian(self, body: int, link: int, positions: np.ndarray) -> np.ndarray:
        """Geometric Jacobian of the link frame origin over all movable joints."""
        q = _floats(positions)
        zeros = [0.0] * len(q)
        lin, ang = self._p.calculateJacobian(
            body, link, [0.0, 0.0, 0.0], q, zeros, zeros, physicsClientId=self._client
        )
        # rows flattened first: a flat iterator converts faster than nested tuples
        rows = lin + ang
        flat = np.fromiter(chain.from_iterable(rows), np.float64, len(rows) * len(q))
        return flat.reshape(len(rows), len(q))

    def collision_shapes(self, body: int, link: int) -> list[CollisionShape]:
        """Primitive collision shapes of a link in world coordinates."""
        p, c = self._p, self._client
        # getCollisionShapeData gives shape poses relative to each link's inertial
        # (centre-of-mass) frame, for the base as for child links, so compose with
        # the COM world pose: getBasePositionAndOrientation for the base,
        # getLinkState items 0 and 1 for a child link (items 4, 5 are the URDF frame).
        if link == BASE_LINK:
            frame = p.getBasePositionAndOrientation(body, physicsClientId=c)
        else:
            state = p.getLinkState(body, link, computeForwardKinematics=1, physicsClientId=c)
            frame = (state[0], state[1])
        shapes = []
        for raw in p.getCollisionShapeData(body, link, physicsClientId=c):
            kind = _SHAPE_KINDS.get(raw[2], "unknown")
            dims = tuple(float(x) for x in raw[3])
            if kind == "box":
                dims = tuple(d / 2.0 for d in dims)
            elif kind in ("cylinder", "capsule"):
                dims = (dims[1], dims[0])
            elif kind == "sphere":
                dims = (dims[0],)
            pos, orn = p.multiplyTransforms(frame[0], frame[1], raw[5], raw[6])
            shapes.append(CollisionShape(kind, dims, np.asarray(pos), np.asarray(orn)))
        return shapes
