"""Static boxes (ground, table) ray-cast into frames: same physics, same-looking frames."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from simjudge.envs.backends import flat_boxes, make_backend
from simjudge.envs.backends.base import CameraSpec
from simjudge.tasks.spec import make_task_env

ACTIONS = np.random.default_rng(0).uniform(-1, 1, size=(15, 7)).astype(np.float32)


@pytest.fixture(scope="module")
def runs():
    """Observations and a frame of OpenDrawer-v0 with the boxes rasterized, then ray-cast."""
    out = {}
    patch = pytest.MonkeyPatch()
    try:
        for flat in (False, True):
            patch.setattr(flat_boxes, "ENABLED", flat)
            env = make_task_env("OpenDrawer-v0")
            rows = [env.reset(seed=0)[0]] + [env.step(a)[0] for a in ACTIONS]
            front = dataclasses.replace(env.unwrapped._camera, width=96, height=96)
            low = CameraSpec(eye=(-1.8, 0.6, 0.4), target=(0.0, 0.0, -0.3), width=96, height=96)
            frames = [env.unwrapped.backend.render(c, depth=True) for c in (front, low)]
            scene = env.scene
            bodies = (scene.ground, scene.table, scene.objects["StorageFurniture"].body)
            flat_bodies = {box.body for box in env.unwrapped.backend._flat_boxes.boxes}
            out[flat] = (np.stack(rows), frames, bodies, flat_bodies)
            env.close()
    finally:
        patch.undo()
    return out


def test_physics_is_the_same_with_ray_cast_boxes(runs):
    assert runs[False][3] == set() and runs[True][3] == set(runs[True][2])  # cabinet shell too
    assert np.array_equal(runs[False][0], runs[True][0])


def test_frames_match_the_rasterized_ones(runs):
    for raster, flat in zip(runs[False][1], runs[True][1], strict=True):
        differs = np.abs(raster.rgb.astype(int) - flat.rgb.astype(int)).max(axis=2) > 3
        assert differs.mean() < 0.002  # pixel for pixel, bar a rare rounding at an edge
        assert (raster.segmentation != flat.segmentation).mean() < 0.002
        # the rasterizer's depth across a big triangle is interpolated; ray casting is exact
        assert np.allclose(raster.depth, flat.depth, rtol=0.02)
        assert set(runs[True][2]) <= set(np.unique(flat.segmentation).tolist())


def test_a_box_hidden_behind_a_rasterized_body_stays_hidden():
    backend = make_backend("pybullet", timestep=0.01)
    try:
        camera = CameraSpec(eye=(2.0, 0.0, 0.0), target=(0.0, 0.0, 0.0), width=32, height=32)
        far_box = backend.add_box((0.6, 0.6, 0.6), (-1.0, 0.0, 0.0), rgba=(1, 0, 0, 1))
        assert backend.render(camera).rgb[16, 16, 0] > 150  # the red static box, ray-cast
        near_box = backend.add_box((0.2, 0.2, 0.2), (0.5, 0.0, 0.0), mass=1.0, rgba=(0, 0, 1, 1))
        result = backend.render(camera, depth=True)
        assert result.segmentation[16, 16] == near_box and result.rgb[16, 16, 2] > 150
        assert far_box in set(result.segmentation.ravel().tolist())
        assert 1.2 < result.depth[16, 16] < 1.4
    finally:
        backend.close()
