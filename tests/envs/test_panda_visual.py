"""The decimated visual Panda: used by default, same physics as the stock robot, few triangles."""

from __future__ import annotations

import filecmp
from pathlib import Path

import numpy as np
import pytest

from simjudge.envs import robot
from simjudge.envs.backends import make_backend
from simjudge.envs.robot import PANDA_URDFS, PandaSuction
from simjudge.tasks.spec import make_task_env

LOWPOLY = Path(PANDA_URDFS["lowpoly"]).parent


def _triangles(folder: Path) -> int:
    return sum(
        sum(1 for line in path.read_text().splitlines() if line.startswith("f "))
        for path in folder.glob("*.obj")
    )


def test_the_decimated_panda_is_the_default_and_small():
    assert robot.PANDA_VISUAL == "lowpoly" and Path(PANDA_URDFS["lowpoly"]).is_file()
    assert _triangles(LOWPOLY / "meshes" / "visual") < 12_000  # stock: ~100k
    assert (LOWPOLY / "meshes" / "visual" / "palette.png").stat().st_size < 4096


def test_collision_meshes_are_the_stock_ones():
    import pybullet_data

    stock = Path(pybullet_data.getDataPath()) / "franka_panda"
    for path in (stock / "meshes" / "collision").iterdir():
        assert filecmp.cmp(path, LOWPOLY / "meshes" / "collision" / path.name, shallow=False)
    assert filecmp.cmp(stock / "panda.urdf", LOWPOLY / "panda.urdf", shallow=False)


def test_unknown_visual_names_the_choices():
    backend = make_backend("pybullet", timestep=0.01)
    try:
        with pytest.raises(ValueError, match="'lowpoly', 'stock'"):
            PandaSuction(backend, visual="shiny")
    finally:
        backend.close()


def test_physics_is_the_same_with_either_visual(monkeypatch):
    observations = {}
    actions = np.random.default_rng(0).uniform(-1, 1, size=(15, 7)).astype(np.float32)
    for visual in ("stock", "lowpoly"):
        monkeypatch.setattr(robot, "PANDA_VISUAL", visual)
        env = make_task_env("OpenDrawer-v0")
        assert env.scene.robot.visual == visual
        rows = [env.reset(seed=0)[0]]
        rows += [env.step(a)[0] for a in actions]
        observations[visual] = np.stack(rows)
        env.close()
    assert np.array_equal(observations["stock"], observations["lowpoly"])
