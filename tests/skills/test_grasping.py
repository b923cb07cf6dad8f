"""Grasp samples from asset geometry, and the backend's collision shapes they agree with."""

from __future__ import annotations

import numpy as np
import pytest

from simjudge.envs.catalogue import default_catalogue
from simjudge.envs.state_api import UnknownNameError
from simjudge.envs.transforms import quat_rotate, quat_to_matrix
from simjudge.skills.geometry import load_urdf_geometry, point_inside
from simjudge.skills.grasping import (
    TIP_OFFSET,
    clear_sample_cache,
    grasp_candidates,
    link_surface_samples,
)
from simjudge.skills.scripted import interaction_frame
from simjudge.tasks.spec import make_task_env


@pytest.fixture(scope="module")
def drawer_env():
    env = make_task_env("OpenDrawer-v0")
    yield env
    env.close()


def _box_corners(shape) -> np.ndarray:
    signs = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=float)
    return (
        shape.position
        + (signs * np.asarray(shape.dimensions)) @ quat_to_matrix(shape.orientation).T
    )


@pytest.mark.parametrize("link", [-1, 0, 2])
def test_collision_shapes_span_the_link_aabb(drawer_env, link):
    """Box shapes of a link, placed by ``collision_shapes``, reach exactly the faces of the
    link's AABB (child links have their centre of mass away from the link frame)."""
    backend = drawer_env.backend
    body = drawer_env.scene.objects["StorageFurniture"].body
    shapes = backend.collision_shapes(body, link)
    assert shapes and all(s.kind == "box" for s in shapes)
    corners = np.concatenate([_box_corners(s) for s in shapes])
    lo, hi = backend.get_aabb(body, link)
    np.testing.assert_allclose(corners.min(axis=0), lo, atol=2e-3)  # AABB margin is 1 mm
    np.testing.assert_allclose(corners.max(axis=0), hi, atol=2e-3)


def _on_own_surface(samples, shapes) -> None:
    for s in samples:
        p, n = np.asarray(s.point), np.asarray(s.normal)
        assert abs(np.linalg.norm(n) - 1.0) < 1e-9
        inside = any(point_inside(shape, p - 1e-3 * n, tolerance=0.0)[0] for shape in shapes)
        outside = not any(point_inside(shape, p + 1e-3 * n, tolerance=0.0)[0] for shape in shapes)
        assert inside and outside, s


@pytest.mark.parametrize(
    ("asset", "link"),
    [
        ("StorageFurniture-0", "link_1"),
        ("StorageFurniture-0", "link_0"),
        ("Cube-0", "base"),
        ("Microwave-0", "link_1"),
    ],
)
def test_samples_lie_on_the_surface_with_outward_normals(asset, link):
    entry = default_catalogue().get(asset)
    samples = [s for s in link_surface_samples(entry, link) if s.kind != "interaction"]
    assert len(samples) >= 4
    _on_own_surface(samples, load_urdf_geometry(str(entry.urdf_path)).shapes[link])


def test_faces_glued_to_other_parts_are_excluded():
    entry = default_catalogue().get("StorageFurniture-0")
    samples = link_surface_samples(
        entry, "link_1"
    )  # a knob: stem glued to the drawer, cap on the stem
    kinds = [s.kind for s in samples]
    assert kinds[0] == "interaction" and "cylinder-cap" in kinds
    for s in samples:
        assert s.point[0] < -1e-3, s  # nothing on the drawer front (x = 0 in the knob frame)
        assert s.normal[0] < 0.5, s  # no face looking back into the drawer
    # the drawer's bottom and side boards end against the back of its front panel (x = 0.015)
    drawer = link_surface_samples(entry, "link_0")
    assert not any(s.normal[0] < -0.5 and abs(s.point[0] - 0.015) < 1e-3 for s in drawer)
    assert any(s.normal[0] < -0.5 and abs(s.point[0]) < 1e-3 for s in drawer)  # the front itself


def test_samples_are_cached_in_memory_and_on_disk(tmp_path):
    entry = default_catalogue().get("Microwave-0")
    clear_sample_cache()
    first = link_surface_samples(entry, "link_1", cache_dir=tmp_path)
    assert link_surface_samples(entry, "link_1", cache_dir=tmp_path) is first
    assert len(list(tmp_path.glob("Microwave-0__link_1__*.json"))) == 1
    clear_sample_cache()
    again = link_surface_samples(entry, "link_1", cache_dir=tmp_path)
    assert [s.point for s in again] == [s.point for s in first]
    assert again[0].kind == "interaction"
    with pytest.raises(UnknownNameError, match="link_9"):
        link_surface_samples(entry, "link_9")


def test_samples_agree_with_the_simulated_link(drawer_env):
    """Link-frame samples from the URDF, placed at the simulated link, lie on the simulator's
    collision boxes of that link."""
    obj = drawer_env.scene.objects["StorageFurniture"]
    backend = drawer_env.backend
    pos, orn = backend.get_link_poses(obj.body, [0])
    shapes = backend.collision_shapes(obj.body, 0)
    for s in link_surface_samples(obj.entry, "link_0")[:12]:
        p = pos[0] + quat_rotate(orn[0], np.asarray(s.point))
        dist = []
        for shape in shapes:
            local = quat_to_matrix(shape.orientation).T @ (p - shape.position)
            dist.append(np.max(np.abs(local) - np.asarray(shape.dimensions)))
        assert min(abs(d) for d in dist) < 1e-6


def test_candidates_start_at_the_recorded_interaction_point(drawer_env):
    drawer_env.reset()
    obj = drawer_env.scene.objects["StorageFurniture"]
    cands = grasp_candidates(drawer_env.scene, obj, ["link_1"], standoff=0.03)
    best = cands[0]
    point, normal = interaction_frame(drawer_env, obj, "link_1")
    np.testing.assert_allclose(best.point, point, atol=1e-9)
    np.testing.assert_allclose(best.normal, normal, atol=1e-9)
    assert best.kind.startswith("interaction")
    for c in cands:
        assert abs(np.linalg.norm(c.axis) - 1.0) < 1e-9 and c.axis @ c.normal < 0  # moves inwards
        np.testing.assert_allclose(
            quat_rotate(c.orientation, np.array([0.0, 0.0, 1.0])), c.axis, atol=1e-6
        )
        np.testing.assert_allclose(c.contact, c.point - TIP_OFFSET * c.axis)
        np.testing.assert_allclose(np.linalg.norm(c.pre_contact - c.contact), 0.03)
    assert len({(tuple(np.round(c.point, 4)), tuple(np.round(c.axis, 3))) for c in cands}) == len(
        cands
    )
