"""Contacts, closest points, suction welds, collision filters and kinematics of the SAPIEN backend.

A mixin of :class:`~simjudge.envs.backends.sapien_backend.SapienBackend`, kept apart so
each module stays readable: the backend owns the scene and the body records, this reads
contacts and geometry from them, holds the suction drives and computes Jacobians and IK.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .base import BackendError, CollisionShape, Contact
from .kinematics import dls_inverse_kinematics
from .sapien_body import SapienBody as _Body
from .sapien_body import component_of as _component_of
from .sapien_body import matrix_quat as _matrix_quat
from .sapien_body import rotation as _rotation
from .sapien_body import xyzw as _xyzw
from .sapien_filters import exclude_pair
from .sapien_geometry import LinkGeometry, fcl_distance, geometry_for

__all__ = ["SapienQueries", "WELD_DAMPING", "WELD_STIFFNESS"]

WELD_STIFFNESS = 1e5
"""Stiffness of the suction drive (N/m, and N·m/rad for the slerp drive)."""
WELD_DAMPING = 2e3
"""Damping of the suction drive."""
_WELD_STIFFNESS, _WELD_DAMPING = WELD_STIFFNESS, WELD_DAMPING


class SapienQueries:
    """Queries, welds and kinematics over a SAPIEN scene (mixed into the backend)."""

    timestep: float
    _sapien: Any
    _scene: Any
    _component_owner: dict[int, tuple[int, int]]
    _drives: dict[int, tuple[Any, ...]]
    _next: dict[str, int]
    _type_bits: dict[int, int]
    _excluded: set[frozenset[tuple[int, int]]]

    def _body(self, body: int) -> _Body:  # pragma: no cover - provided by the backend
        raise NotImplementedError

    def get_aabb(self, body: int, link: int | None = None) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover
        """Provided by the backend."""
        raise NotImplementedError

    def get_joint_states(self, body: int, joints: list[int]) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover
        """Provided by the backend."""
        raise NotImplementedError

    # contacts and queries -------------------------------------------------------------
    def contacts(self, body_a: int, body_b: int | None = None, link_a: int | None = None) -> list[Contact]:
        """Contacts of the last step that involve ``body_a``."""
        self._body(body_a)
        owner = self._component_owner
        found = []
        for contact in self._scene.physx_system.get_contacts():
            first, second = owner.get(id(contact.bodies[0])), owner.get(id(contact.bodies[1]))
            if first is None or second is None:
                first = owner.get(id(_component_of(contact.bodies[0])))
                second = owner.get(id(_component_of(contact.bodies[1])))
            if first is None or second is None:
                continue
            sign = 1.0
            if first[0] != body_a:
                if second[0] != body_a:
                    continue
                first, second, sign = second, first, -1.0
            if (body_b is not None and second[0] != body_b) or (link_a is not None and first[1] != link_a):
                continue
            for point in contact.points:
                normal = np.asarray(point.normal, float) * sign  # PhysX: from the second body to the first
                force = float(np.linalg.norm(point.impulse)) / self.timestep
                position = np.asarray(point.position, float)
                found.append(Contact(first[0], first[1], second[0], second[1], position,
                                     position - normal * float(point.separation), normal,
                                     float(point.separation), force))
        return found

    def _geometry(self, record: _Body, link: int) -> LinkGeometry | None:
        index = link + 1
        if not record.shapes[index]:
            return None
        geometry = record.geometry[index]
        if geometry is None:
            geometry = record.geometry[index] = geometry_for(record.shapes[index])
        pose = record.links[index].entity_pose
        geometry.place(np.asarray(pose.p, float), _rotation(pose.q))
        return geometry

    def closest_points(self, body_a: int, body_b: int, max_distance: float,
                       link_a: int | None = None, link_b: int | None = None) -> list[Contact]:
        """Shape pairs closer than ``max_distance`` (FCL on the PhysX shapes)."""
        record_a, record_b = self._body(body_a), self._body(body_b)
        links_a = range(-1, len(record_a.links) - 1) if link_a is None else [link_a]
        links_b = range(-1, len(record_b.links) - 1) if link_b is None else [link_b]
        found = []
        for la in links_a:
            for lb in links_b:
                if body_a == body_b and la == lb:
                    continue
                lo_a, hi_a = self.get_aabb(body_a, la)
                lo_b, hi_b = self.get_aabb(body_b, lb)
                if np.any(lo_a > hi_b + max_distance) or np.any(lo_b > hi_a + max_distance):
                    continue
                geo_a, geo_b = self._geometry(record_a, la), self._geometry(record_b, lb)
                if geo_a is None or geo_b is None:
                    continue
                for obj_a in geo_a.objects:
                    for obj_b in geo_b.objects:
                        distance, pa, pb = fcl_distance(obj_a, obj_b)
                        if distance < max_distance:
                            gap = pa - pb
                            norm = float(np.linalg.norm(gap))
                            normal = gap / norm * (1.0 if distance >= 0 else -1.0) if norm > 1e-12 else np.array([0.0, 0, 1])
                            found.append(Contact(body_a, la, body_b, lb, pa, pb, normal, distance, 0.0))
        return found

    def update_collisions(self) -> None:
        """Nothing to do: queries read the current poses."""

    def create_fixed_constraint(self, parent_body: int, parent_link: int, child_body: int, child_link: int,
                                max_force: float = 500.0) -> int:
        """A stiff 6-DoF drive holding the current relative pose, force- and torque-limited.

        PhysX drives move their child body, so a static child (a part of the world)
        swaps roles with the parent; the held relation is the same. PhysX reads this
        drive's limits as impulses per timestep (measured: a limit of 300 held a 1,000 kg
        box), so the linear limit given is ``max_force · timestep`` and the slerp limit twice
        that (the slerp drive acts on the quaternion error, half the angle): the weld then
        holds at most ``max_force`` N and N·m, as PyBullet's fixed constraint clamps every
        row at its ``maxForce`` (``tests/envs/backends/test_sapien_weld_bound.py``). An
        overloaded weld stretches at its bound and the robot's release rule (3 cm) lets go.
        """
        parent = self._body(parent_body).links[parent_link + 1]
        child = self._body(child_body).links[child_link + 1]
        if not isinstance(child, self._sapien.physx.PhysxRigidBodyComponent):
            parent, child = child, parent
        relative = parent.entity_pose.inv() * child.entity_pose
        drive = self._scene.create_drive(parent, relative, child, self._sapien.Pose())
        limit = float(max_force) * self.timestep  # an impulse per step: see the docstring
        for axis in ("x", "y", "z"):
            getattr(drive, f"set_drive_property_{axis}")(_WELD_STIFFNESS, _WELD_DAMPING, limit)
        drive.set_drive_property_slerp(_WELD_STIFFNESS, _WELD_DAMPING, 2.0 * limit)
        handle = self._next["constraint"]
        self._next["constraint"] += 1
        self._drives[handle] = (drive, child.entity, parent, child)
        return handle

    def remove_constraint(self, constraint: int) -> None:
        """Remove a suction drive (and wake what it held)."""
        entry = self._drives.pop(constraint, None)
        if entry is None:
            raise BackendError(f"no constraint {constraint} in this SAPIEN world")
        drive, entity, *held = entry
        entity.remove_component(drive)
        for component in held:
            if hasattr(component, "wake_up"):
                component.wake_up()

    def set_collision_between(self, body_a: int, link_a: int, body_b: int, link_b: int, enabled: bool) -> None:
        """Switch off collision between links of two bodies (:func:`exclude_pair`).

        Links of one body never collide (:func:`ignore_self_collision`), so a pair within one
        body needs nothing; a pair switched off stays off.

        Raises:
            BackendError: ``enabled`` for a pair switched off before (not supported here).
        """
        first, second = self._body(body_a).links[link_a + 1], self._body(body_b).links[link_b + 1]
        if body_a == body_b:
            return
        pair = frozenset(((body_a, link_a), (body_b, link_b)))
        if enabled:
            if pair in self._excluded:
                raise BackendError(
                    f"the SAPIEN backend cannot switch collision between {sorted(pair)} back on; "
                    "rebuild the world (reset_world) or use the pybullet or mujoco backend"
                )
            return
        exclude_pair(first, second, self._type_bits)
        self._excluded.add(pair)

    # kinematics ---------------------------------------------------------------------
    def _fk_jacobian(self, record: _Body, link: int, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Link origin, rotation and geometric Jacobian at the movable joints' ``positions``.

        Pinocchio's (in the articulation's root frame) computes the spatial Jacobian of the link's
        joint, i.e. the velocity of the point at the root's origin; the link origin ``p`` moves
        with ``v + ω × p``, and both rows are turned into the world frame by the root's rotation.
        """
        if record.pinocchio is None:
            record.pinocchio = record.articulation.create_pinocchio_model()
        movable = [j.index for j in record.infos if j.type != "fixed"]
        columns = [record.dof[joint] for joint in movable]
        qpos = np.asarray(record.articulation.get_qpos(), float).copy()
        qpos[columns] = positions
        model = record.pinocchio
        model.compute_full_jacobian(qpos)  # Pinocchio's joint Jacobians: forward kinematics too
        index = record.art_link[link + 1]
        pose = model.get_link_pose(index)
        local = np.asarray(pose.p, float)
        spatial = model.get_link_jacobian(index, local=False)[:, columns]
        (wx, wy, wz), (px, py, pz) = spatial[3:], local.tolist()
        linear = spatial[:3] + np.array([wy * pz - wz * py, wz * px - wx * pz, wx * py - wy * px])
        root = record.articulation.root_pose  # Pinocchio's poses are in the root link frame
        root_pos, root_rot = np.asarray(root.p, float), _rotation(root.q)
        jac = np.concatenate([root_rot @ linear, root_rot @ spatial[3:]])
        return root_pos + root_rot @ local, root_rot @ _rotation(pose.q), jac

    def jacobian(self, body: int, link: int, positions: np.ndarray) -> np.ndarray:
        """Geometric Jacobian of the link frame origin over the movable joints at ``positions``."""
        return self._fk_jacobian(self._body(body), link, np.asarray(positions, float))[2]

    def inverse_kinematics(self, body: int, link: int, position, orientation, lower, upper, rest,
                           max_iterations: int = 20, threshold: float = 1e-4) -> np.ndarray:
        """Damped-least-squares IK from the current joints with a null-space pull to ``rest``."""
        record = self._body(body)
        movable = [j.index for j in record.infos if j.type != "fixed"]
        start = self.get_joint_states(body, movable)[0]
        return dls_inverse_kinematics(lambda q: self._fk_jacobian(record, link, q), start, position,
                                      orientation, lower, upper, rest, max_iterations, threshold)

    def collision_shapes(self, body: int, link: int) -> list[CollisionShape]:
        """Collision shapes of a link in world coordinates."""
        record = self._body(body)
        pose = record.links[link + 1].entity_pose
        origin, rotation = np.asarray(pose.p, float), _rotation(pose.q)
        shapes = []
        for geom in record.shapes[link + 1]:
            dims: tuple[float, ...] = geom.mesh_scale
            if geom.kind == "box":
                dims = tuple(geom.size)
            elif geom.kind == "cylinder":
                dims = (geom.size[0], 2.0 * geom.size[1])
            elif geom.kind == "sphere":
                dims = (geom.size[0],)
            world = rotation @ _rotation(geom.quat)
            shapes.append(CollisionShape(geom.kind, dims, origin + rotation @ np.asarray(geom.pos),
                                         _xyzw(_matrix_quat(world))))
        return shapes
