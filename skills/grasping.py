"""Suction grasp candidates from an asset's geometry, as RoboGen samples them.

Why from geometry: RoboGen grasps by sampling a point on the target link's
surface with its outward normal, aligning the gripper axis with the inward
normal, planning to a pre-contact pose 3 cm out and moving in until contact.
Sampling from renders (RoboGen's way) is slow and view-dependent; here samples
come from the link's URDF collision primitives (box faces, cylinder sides and
caps, spheres), are computed once per asset link and scale and cached (in
memory, optionally on disk), and exclude faces that are glued to or face into
another part of the asset. The asset's recorded interaction point (``meta.json``)
is the first candidate when present.

At grasp time the link-frame samples are placed in the world and ranked: faces
that look towards the robot and upwards, large and central patches first;
downward faces (usually resting on a support) are dropped. A side face yields
two candidates: the gripper tilted 45° down (the rule of
:func:`~simjudge.skills.scripted.approach_axis`), which the Panda reaches far
more often, then straight along the inward normal.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from simjudge.envs.backends import BASE_LINK
from simjudge.envs.catalogue import AssetEntry
from simjudge.envs.scene_builder import BuiltScene, SceneObject
from simjudge.envs.state_api import UnknownNameError
from simjudge.envs.transforms import quat_align_z, quat_from_matrix, quat_rotate, quat_to_matrix
from simjudge.tasks.spec import atomic_write

from .geometry import SurfaceSample, load_urdf_geometry, sample_surface

__all__ = [
    "APPROACHES",
    "GraspCandidate",
    "TIP_OFFSET",
    "clear_sample_cache",
    "grasp_candidates",
    "link_surface_samples",
    "side_tilted_axis",
]

APPROACHES: tuple[str, ...] = ("auto", "straight", "tilted")
"""``straight``: gripper along the inward normal; ``tilted``: side faces approached 45°
from above; ``auto``: tilted first, then straight, for each side-face sample.

Measured on ``bench/planning.py`` (40 grasps over 23 links, BIT*): tilted 100 %
success with 1.0 samples per grasp, straight 90 % with 1.4; the Panda often cannot
hold its gripper level far out in front of it."""

TIP_OFFSET = 0.011
"""How far the closed finger tips reach beyond the Panda's suction point along the
gripper axis (m): the suction point touches a surface at this distance from it."""

_SAMPLER_VERSION = 1
_SHOULDER = np.array([0.0, 0.0, 0.333])
"""Panda shoulder (joint 2) height above the robot base."""
_SIDE_TILT = 1.0
_MAX_DOWNWARD = -0.7
_MIN_FACING = -0.2

_memory: dict[tuple[str, str, float], tuple[SurfaceSample, ...]] = {}


def clear_sample_cache() -> None:
    """Forget the in-memory surface samples (e.g. after regenerating assets)."""
    _memory.clear()


def side_tilted_axis(normal: np.ndarray) -> np.ndarray:
    """Gripper axis for a side face tilted 45° downwards (same rule as the scripted oracle)."""
    inward = -np.asarray(normal, dtype=float)
    horizontal = np.array([inward[0], inward[1], 0.0])
    norm = float(np.linalg.norm(horizontal))
    if norm < 1e-9:
        return inward / np.linalg.norm(inward)
    axis = horizontal / norm + np.array([0.0, 0.0, -_SIDE_TILT])
    return axis / np.linalg.norm(axis)


def _interaction_sample(entry: AssetEntry, link: str, scale: float) -> SurfaceSample | None:
    links = entry.meta.get("links", {})
    info = (links.get(link) or {}).get("interaction") if isinstance(links, dict) else None
    if not info:
        return None
    point = np.asarray(info["point"], dtype=float) * scale
    normal = np.asarray(info["normal"], dtype=float)
    normal = normal / np.linalg.norm(normal)
    return SurfaceSample(
        (float(point[0]), float(point[1]), float(point[2])),
        (float(normal[0]), float(normal[1]), float(normal[2])),
        "interaction",
        math.inf,
    )


def _disk_path(cache_dir: Path, entry: AssetEntry, link: str, scale: float) -> Path:
    digest = hashlib.sha256(Path(entry.urdf_path).read_bytes()).hexdigest()[:12]
    return cache_dir / f"{entry.asset_id}__{link}__{scale:g}__v{_SAMPLER_VERSION}_{digest}.json"


def link_surface_samples(
    entry: AssetEntry, link: str, scale: float = 1.0, cache_dir: str | Path | None = None
) -> tuple[SurfaceSample, ...]:
    """Surface samples of one asset link in its frame, computed once and cached.

    Args:
        entry: Catalogue entry of the asset.
        link: Link name (``base``, ``link_0``, ...).
        scale: The scene's scale of the asset.
        cache_dir: Optional folder for a JSON disk cache (keyed by the URDF's hash).

    Raises:
        UnknownNameError: The asset has no such link.
    """
    key = (entry.asset_id, link, round(float(scale), 6))
    hit = _memory.get(key)
    if hit is not None:
        return hit
    geometry = load_urdf_geometry(str(entry.urdf_path), float(scale))
    if link not in geometry.shapes:
        raise UnknownNameError("link", link, list(geometry.shapes), entry.asset_id)
    path = _disk_path(Path(cache_dir), entry, link, scale) if cache_dir is not None else None
    if path is not None and path.is_file():
        rows = json.loads(path.read_text(encoding="utf-8"))
        samples = tuple(
            SurfaceSample(tuple(r["point"]), tuple(r["normal"]), r["kind"], r["area"], r["centre"])
            for r in rows
        )
    else:
        first = _interaction_sample(entry, link, scale)
        samples = ((first,) if first else ()) + tuple(sample_surface(geometry, link))
        if path is not None:
            rows = [asdict(s) | {"area": s.area if math.isfinite(s.area) else 1e9} for s in samples]
            atomic_write(path, json.dumps(rows))
    _memory[key] = samples
    return samples


@dataclass(frozen=True)
class GraspCandidate:
    """A grasp in the world: where to touch, from where, with which gripper pose.

    Attributes:
        object_name: Scene object name.
        link_name: Link name.
        body: Backend body handle.
        link: Backend link index.
        point: Surface point (world).
        normal: Outward surface normal (world).
        axis: Gripper approach axis, the direction the suction point moves in (world).
        orientation: End-effector orientation whose local +z is ``axis``.
        contact: Suction-point position with the finger tips on the surface.
        pre_contact: Suction-point position ``standoff`` back along ``axis``.
        score: Ranking score (higher first).
        kind: Sample kind (``interaction``, ``box``, ...), with ``+tilted`` when tilted.
    """

    object_name: str
    link_name: str
    body: int
    link: int
    point: np.ndarray
    normal: np.ndarray
    axis: np.ndarray
    orientation: np.ndarray
    contact: np.ndarray
    pre_contact: np.ndarray
    score: float
    kind: str


def _link_frame(scene: BuiltScene, obj: SceneObject, index: int) -> tuple[np.ndarray, np.ndarray]:
    """World pose of the link's URDF frame (a base pose is reported at its centre of mass)."""
    backend = scene.robot.backend
    pos, orn = backend.get_link_poses(obj.body, [index])
    pos, orn = np.asarray(pos[0], float), np.asarray(orn[0], float)
    if index != BASE_LINK:
        return pos, orn
    scale = scene.config.object(obj.name).scale
    inertial = load_urdf_geometry(str(obj.entry.urdf_path), float(scale)).base_inertial
    rot = quat_to_matrix(orn) @ inertial[:3, :3].T
    return pos - rot @ inertial[:3, 3], quat_from_matrix(rot)


def _score(
    sample: SurfaceSample, point: np.ndarray, normal: np.ndarray, shoulder: np.ndarray
) -> float | None:
    """Rank: facing the robot, facing up, large and central patches; None = not a candidate."""
    if sample.kind == "interaction":
        return 100.0
    to_robot = shoulder - point
    dist = float(np.linalg.norm(to_robot))
    facing = float(normal @ to_robot) / max(dist, 1e-9)
    if normal[2] < _MAX_DOWNWARD or facing < _MIN_FACING:
        return None
    area = math.log10(max(sample.area, 1e-6) / 1e-4)
    return (
        facing
        + 0.5 * float(normal[2])
        + 0.3 * area
        + (0.2 if sample.centre else 0.0)
        - max(0.0, dist - 0.75)
    )


def grasp_candidates(
    scene: BuiltScene,
    obj: SceneObject,
    link_names: list[str],
    standoff: float = 0.03,
    approach: str = "auto",
    reference_orientation: np.ndarray | None = None,
    cache_dir: str | Path | None = None,
) -> list[GraspCandidate]:
    """Ranked world grasp candidates on the given links of ``obj`` (best first).

    Args:
        scene: The built scene.
        obj: The object.
        link_names: Links whose surfaces may be grasped.
        standoff: Gap (m) between finger tips and surface at the pre-contact pose.
        approach: One of :data:`APPROACHES`.
        reference_orientation: Gripper orientation whose roll is kept (the current one).
        cache_dir: Optional disk cache folder for surface samples.
    """
    if approach not in APPROACHES:
        raise ValueError(f"approach={approach!r} is not supported; use one of {list(APPROACHES)}")
    robot = scene.robot
    ref = robot.ee_pose()[1] if reference_orientation is None else np.asarray(reference_orientation)
    base_pos, base_orn = robot.backend.get_base_pose(robot.body)
    shoulder = np.asarray(base_pos) + quat_rotate(np.asarray(base_orn), _SHOULDER)
    scale = scene.config.object(obj.name).scale
    out: list[GraspCandidate] = []
    for link_name in link_names:
        index = obj.link_index[link_name]
        pos, orn = _link_frame(scene, obj, index)
        rot = quat_to_matrix(orn)
        for sample in link_surface_samples(obj.entry, link_name, scale, cache_dir):
            point = pos + rot @ np.asarray(sample.point)
            normal = rot @ np.asarray(sample.normal)
            score = _score(sample, point, normal, shoulder)
            if score is None:
                continue
            side = abs(float(normal[2])) <= 0.5
            for axis, tilted in _axes(normal, approach):
                contact = point - axis * TIP_OFFSET
                out.append(
                    GraspCandidate(
                        obj.name,
                        link_name,
                        obj.body,
                        index,
                        point,
                        normal,
                        axis,
                        quat_align_z(ref, axis),
                        contact,
                        contact - axis * standoff,
                        score - (0.0 if tilted or not side else 0.05),
                        sample.kind + ("+tilted" if tilted else ""),
                    )
                )
    out.sort(key=lambda c: -c.score)
    return _distinct(out)


def _distinct(cands: list[GraspCandidate], tolerance: float = 0.005) -> list[GraspCandidate]:
    """Drop candidates repeating a better one: same link, approach axis and point.

    Points count as the same within ``tolerance`` (the recorded interaction point is usually
    also a face centre).
    """
    kept: list[GraspCandidate] = []
    for cand in cands:
        if not any(
            k.link == cand.link
            and float(k.axis @ cand.axis) > 0.999
            and float(np.linalg.norm(k.point - cand.point)) < tolerance
            for k in kept
        ):
            kept.append(cand)
    return kept


def _axes(normal: np.ndarray, approach: str) -> list[tuple[np.ndarray, bool]]:
    straight = -normal / np.linalg.norm(normal)
    side = abs(float(normal[2])) <= 0.5
    if approach == "straight" or not side:
        return [(straight, False)]
    if approach == "tilted":
        return [(side_tilted_axis(normal), True)]
    return [(side_tilted_axis(normal), True), (straight, False)]
