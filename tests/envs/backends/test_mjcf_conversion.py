"""simjudge's URDF → MJCF conversion, its cache, and backend selection."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest

from simjudge.envs.backends import (
    UnknownBackendError,
    available_backends,
    default_backend,
    make_backend,
)
from simjudge.envs.backends.mjcf import MjcfConversionError, cached_mjcf, parse_urdf, urdf_to_mjcf
from simjudge.envs.catalogue import default_catalogue

pytest.importorskip("mujoco")


def _oven():
    return default_catalogue().get("Oven-0")


def test_conversion_is_deterministic_and_keeps_what_mujoco_drops():
    entry = _oven()
    text = urdf_to_mjcf(entry.urdf_path, fixed_base=True)
    assert text == urdf_to_mjcf(entry.urdf_path, fixed_base=True)
    root = ET.fromstring(text)
    model = parse_urdf(entry.urdf_path)
    joints = {j.get("name"): j for j in root.iter("joint")}
    for joint in model.joints:
        if joint.type == "fixed":
            assert f"joint{joint.child}" not in joints
            continue
        element = joints[f"joint{joint.child}"]
        assert float(element.get("damping")) == joint.damping
        assert float(element.get("frictionloss")) == joint.friction
        if joint.limited:
            assert [float(v) for v in element.get("range").split()] == [joint.lower, joint.upper]
        else:
            assert element.get("limited") == "false"
    actuators = {a.get("joint"): a for a in root.iter("position")}
    for joint in model.joints:
        if joint.type != "fixed":
            force = float(actuators[f"joint{joint.child}"].get("forcerange").split()[1])
            assert force == pytest.approx(max(joint.effort, 1e-6))
    bodies = [b.get("name") for b in root.iter("body")]
    assert bodies == [f"link{i}" for i in range(-1, len(model.joints))]
    n_collision = sum(len(link.collisions) for link in model.links)
    colliding = [g for g in root.iter("geom") if g.get("contype") == "1"]
    assert len(colliding) == n_collision
    assert root.find("worldbody/body/freejoint") is None


def test_free_base_gets_a_free_joint_and_every_link_pair_is_excluded():
    root = ET.fromstring(urdf_to_mjcf(_oven().urdf_path, fixed_base=False))
    assert root.find("worldbody/body/freejoint") is not None
    excluded = {frozenset((e.get("body1"), e.get("body2"))) for e in root.iter("exclude")}
    model = parse_urdf(_oven().urdf_path)
    links = [f"link{i}" for i in range(-1, len(model.joints))]
    # no self-collision, as PyBullet loads URDFs: siblings too, not only parent and child
    assert excluded == {frozenset((a, b)) for i, a in enumerate(links) for b in links[i + 1:]}
    assert len(links) > 2  # the oven has siblings (door and knobs)


def test_cache_is_reused_and_reproducible(tmp_path, monkeypatch):
    monkeypatch.setenv("SIMJUDGE_MJCF_CACHE", str(tmp_path))
    entry = _oven()
    first = cached_mjcf(entry.urdf_path, 1.0, True)
    stamp = first.stat().st_mtime_ns
    assert cached_mjcf(entry.urdf_path, 1.0, True) == first and first.stat().st_mtime_ns == stamp
    assert first.read_text() == urdf_to_mjcf(entry.urdf_path, 1.0, True)
    assert cached_mjcf(entry.urdf_path, 2.0, True) != first  # the scale is part of the key


def test_scaled_assets_scale_geometry_not_mass():
    entry = _oven()
    small, large = parse_urdf(entry.urdf_path, 1.0), parse_urdf(entry.urdf_path, 2.0)
    assert large.links[0].mass == small.links[0].mass
    assert np.allclose(np.array(large.links[0].collisions[0].size), 2.0 * np.array(small.links[0].collisions[0].size))


def test_bad_urdf_says_what_is_wrong(tmp_path):
    path = tmp_path / "bad.urdf"
    path.write_text('<robot name="r"><link name="a"/><link name="b"/></robot>')
    with pytest.raises(MjcfConversionError, match="one root link"):
        parse_urdf(path)
    path.write_text('<robot name="r"><link name="a"><collision><geometry><capsule/></geometry>'
                    "</collision></link></robot>")
    with pytest.raises(MjcfConversionError, match="unsupported URDF geometry"):
        parse_urdf(path)


def test_backend_selection(monkeypatch):
    assert {"pybullet", "mujoco"} <= set(available_backends())
    monkeypatch.delenv("SIMJUDGE_BACKEND", raising=False)
    assert default_backend() == "pybullet"
    monkeypatch.setenv("SIMJUDGE_BACKEND", "mujoco")
    assert default_backend() == "mujoco"
    with pytest.raises(UnknownBackendError, match="supported backends"):
        make_backend("gazebo")


def test_env_uses_the_default_backend(monkeypatch):
    from simjudge.envs.sim_env import SimEnv

    monkeypatch.setenv("SIMJUDGE_BACKEND", "mujoco")
    env = SimEnv({"objects": [{"name": "Cube", "asset": "Cube-0", "center": [0.3, 0.3]}]})
    try:
        assert type(env.backend).__name__ == "MuJoCoBackend"
    finally:
        env.close()


def test_sapien_render_error_says_why_and_what_renders():
    pytest.importorskip("sapien")
    from simjudge.envs.backends import BackendError, CameraSpec
    from simjudge.envs.backends.sapien_backend import sapien_render_problem

    if sapien_render_problem() is None:
        pytest.skip("a Vulkan device exists here")
    backend = make_backend("sapien")
    with pytest.raises(BackendError, match="Vulkan") as caught:
        backend.render(CameraSpec())
    assert "mujoco" in str(caught.value) and "pybullet" in str(caught.value)


def test_mujoco_without_gl_says_how_to_get_it():
    """With an OpenGL platform that cannot start here (glfw, no display), render says what to do."""
    import subprocess
    import sys

    code = (
        "from simjudge.envs.backends import make_backend, CameraSpec, BackendError\n"
        "b = make_backend('mujoco'); b.add_box((0.1, 0.1, 0.1), (0, 0, 0.1))\n"
        "try:\n    b.render(CameraSpec(width=32, height=24))\nexcept BackendError as e:\n    print(e)\n"
    )
    env = {"MUJOCO_GL": "glfw", "DISPLAY": "", "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert "MUJOCO_GL=egl" in out.stdout and "libegl1" in out.stdout, out.stdout + out.stderr
