"""SAPIEN rendering: the camera frame, the check command, and the error where no Vulkan device exists.

Where a Vulkan device exists, the conformance suite's render test
(``test_render_gives_rgb_depth_and_segmentation``) checks SAPIEN's pixels like every other
backend's; here (no GPU) it skips with the reason, and these tests check the error path.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from simjudge.envs.backends import BackendError, CameraSpec, make_backend

pytest.importorskip("sapien")

from simjudge.envs.backends.sapien_render import camera_rotation, sapien_render_problem  # noqa: E402

CHECK = "from simjudge.envs.backends.sapien_render import sapien_render_problem as p; print(p())"
"""The README's check: prints None where SAPIEN can render, else the reason."""


@pytest.mark.parametrize(
    "eye, target",
    [((1.1, -0.9, 0.9), (0.0, 0.0, 0.2)), ((0.0, 0.0, 2.0), (0.0, 0.0, 0.0)), ((-1.0, 0.5, 0.3), (0.2, 0.1, 0.1))],
)
def test_camera_frame_looks_at_the_target_with_z_up(eye, target) -> None:
    """SAPIEN cameras look along their x axis, y to the left, z up: a proper rotation."""
    rotation = camera_rotation(CameraSpec(eye=eye, target=target))
    forward = np.subtract(target, eye) / np.linalg.norm(np.subtract(target, eye))
    assert np.allclose(rotation[:, 0], forward)
    assert np.allclose(rotation.T @ rotation, np.eye(3), atol=1e-12)
    assert np.linalg.det(rotation) == pytest.approx(1.0)
    if abs(forward[2]) < 0.99:  # not looking straight down: the image's up is the world's up side
        assert rotation[2, 2] > 0.0


def test_the_check_command_prints_the_reason_or_none() -> None:
    """The README's one-liner reports whether SAPIEN can render on this machine."""
    out = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    problem = sapien_render_problem()
    assert out.stdout.strip().splitlines()[-1] == ("None" if problem is None else problem)


def test_env_render_without_vulkan_says_why_and_what_renders() -> None:
    """Through the env, as a user meets it: physics works, rendering says why not and what renders."""
    if sapien_render_problem() is None:
        pytest.skip("a Vulkan device exists here: the conformance suite checks SAPIEN's pixels")
    from simjudge.envs.sim_env import SimEnv

    env = SimEnv({"objects": [{"name": "Cube", "asset": "Cube-0", "center": [0.3, 0.3]}]},
                 backend="sapien", render_mode="rgb_array")
    try:
        env.reset(seed=0)
        env.step(np.zeros(7, dtype=np.float32))
        with pytest.raises(BackendError, match="Vulkan") as caught:
            env.render()
        message = str(caught.value)
        assert "backend='mujoco'" in message and "backend='pybullet'" in message
        assert sapien_render_problem() in message
    finally:
        env.close()


def test_a_physics_only_backend_never_builds_a_render_system() -> None:
    """Without a device the scene holds physics only (building visuals would fail)."""
    if sapien_render_problem() is None:
        pytest.skip("a Vulkan device exists here")
    backend = make_backend("sapien")
    try:
        backend.add_box((0.05, 0.05, 0.05), (0.0, 0.0, 0.05), mass=1.0)
        backend.step(2)
        with pytest.raises(RuntimeError, match="no system with name"):
            backend._scene.get_render_system()
    finally:
        backend.close()
