"""Non-privileged features of a scene for the observation progress judge.

What a robot could estimate by itself, read through the env's
:class:`~simjudge.envs.state_api.StateView`: its end-effector pose and whether its suction
cup holds something (proprioception), object poses and bounding boxes (a pose estimator),
joint values (an articulation estimator), the articulation tree (links, joint types,
limits, part semantics) and the first observation of the episode (initial joint values and
poses). Never the goal, its facts, ``info`` or the task's target names.

The scene becomes a set of **tokens**, one per movable joint of an articulated object and
one per free rigid object, each with a short text (``"StorageFurniture drawer slider"``)
and :data:`TOKEN_FEATURES` numbers, plus :data:`GLOBAL_FEATURES` numbers of the robot.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simjudge.envs.articulation import ArticulationTree

__all__ = ["GLOBAL_FEATURES", "TOKEN_FEATURES", "SceneFeatures", "scene_features"]

TOKEN_FEATURES: tuple[str, ...] = (
    "q_norm", "q0_norm", "dq_norm", "range", "revolute", "prismatic", "continuous",
    "spring", "eef_dist", "eef_dx", "eef_dy", "eef_dz", "grasped", "rel_height", "rigid",
    "disp", "dz", "other_xy", "other_dz", "inside", "size", "rel_side",
)
"""Numbers per token (see :func:`scene_features`)."""

GLOBAL_FEATURES: tuple[str, ...] = ("eef_x", "eef_y", "eef_z", "holding", "eef_moved")
"""Numbers of the robot itself."""


@dataclass(frozen=True)
class SceneFeatures:
    """Tokens of one state.

    Attributes:
        texts: One text per token (embedded with MiniLM by the judge).
        tokens: ``(n_tokens, len(TOKEN_FEATURES))`` float32.
        globals_: ``(len(GLOBAL_FEATURES),)`` float32.
    """

    texts: tuple[str, ...]
    tokens: np.ndarray
    globals_: np.ndarray


def _box_distance(point: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[float, np.ndarray]:
    nearest = np.clip(point, lo, hi)
    return float(np.linalg.norm(point - nearest)), nearest - point


def _subtree(tree: ArticulationTree, link: str) -> list[str]:
    """``link`` and the links fixed to it (handles)."""
    out, frontier = [link], [link]
    while frontier:
        parent = frontier.pop()
        for joint in tree.joints:
            if joint.parent == parent and joint.type == "fixed":
                out.append(joint.child)
                frontier.append(joint.child)
    return out


def _trees(view: object) -> dict[str, ArticulationTree | None]:
    scene = view._scene  # type: ignore[attr-defined]
    return {name: getattr(obj, "tree", None) for name, obj in scene.objects.items()}


def scene_features(view: object) -> SceneFeatures:
    """The tokens of the state ``view`` shows (see the module docstring).

    Args:
        view: A :class:`~simjudge.envs.state_api.StateView`.
    """
    v = view
    eef, _ = v.eef_pose()  # type: ignore[attr-defined]
    grasp = v.grasped()  # type: ignore[attr-defined]
    names = [n for n in v.object_names() if not v._is_table(n)]  # type: ignore[attr-defined]
    boxes = {n: v.aabb(n) for n in names}  # type: ignore[attr-defined]
    texts: list[str] = []
    rows: list[list[float]] = []
    trees = _trees(v)
    for name in names:
        tree = trees.get(name)
        base_lo, base_hi = boxes[name]
        movable = tree.movable_joints if tree is not None else []
        for joint in movable:
            q = v.joint_value(name, joint.name)  # type: ignore[attr-defined]
            q0 = v.initial_joint_value(name, joint.name)  # type: ignore[attr-defined]
            span = max(joint.upper - joint.lower, 1e-6)
            dist, delta = 1e9, np.zeros(3)
            held = 0.0
            centre_z = side = 0.0
            for link in _subtree(tree, joint.child):  # type: ignore[arg-type]
                lo, hi = v.aabb(name, link)  # type: ignore[attr-defined]
                d, dd = _box_distance(eef, lo, hi)
                if d < dist:
                    dist, delta = d, dd
                    centre_z = float((lo[2] + hi[2]) / 2 - base_lo[2])
                    side = float((lo[1] + hi[1] - base_lo[1] - base_hi[1]) / 2)
                if grasp is not None and grasp[0] == name and grasp[1] == link:
                    held = 1.0
            sem = tree.link(joint.child)  # type: ignore[union-attr]
            texts.append(f"{tree.category} {sem.semantic} {sem.kind}")  # type: ignore[union-attr]
            rows.append([
                (q - joint.lower) / span, (q0 - joint.lower) / span, (q - q0) / span,
                span, float(joint.type == "revolute"), float(joint.type == "prismatic"),
                float(joint.type == "continuous"), float(joint.spring), dist, *delta, held,
                centre_z / max(float(base_hi[2] - base_lo[2]), 1e-3), 0.0,
                0.0, 0.0, 0.0, 0.0, 0.0, float(np.linalg.norm(base_hi - base_lo)),
                side / max(float(base_hi[1] - base_lo[1]), 1e-3),
            ])
        if movable:
            continue
        pos, _ = v.base_pose(name)  # type: ignore[attr-defined]
        pos0, _ = v.initial_pose(name)  # type: ignore[attr-defined]
        lo, hi = boxes[name]
        dist, delta = _box_distance(eef, lo, hi)
        other_xy, other_dz, inside = 1.0, 1.0, 0.0
        centre = (lo + hi) / 2
        for other in names:
            if other == name:
                continue
            olo, ohi = boxes[other]
            xy = float(np.linalg.norm(centre[:2] - (olo[:2] + ohi[:2]) / 2))
            if xy < other_xy:
                other_xy, other_dz = xy, float(lo[2] - ohi[2])
                inside = float(np.all(centre[:2] >= olo[:2]) and np.all(centre[:2] <= ohi[:2]))
        held = float(grasp is not None and grasp[0] == name)
        category = tree.category if tree is not None else name
        texts.append(f"{category} object")
        rows.append([
            0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, dist, *delta, held, 0.0, 1.0,
            float(np.linalg.norm(pos - pos0)), float(pos[2] - pos0[2]), other_xy, other_dz,
            inside, float(np.linalg.norm(hi - lo)), 0.0,
        ])
    globals_ = np.array([*eef, float(grasp is not None), 0.0], dtype=np.float32)
    tokens = np.asarray(rows, dtype=np.float32).reshape(len(rows), len(TOKEN_FEATURES))
    return SceneFeatures(tuple(texts), tokens, globals_)
