"""Shared fixtures: small scenes built on the real PyBullet backend."""

from __future__ import annotations

import pytest

from simjudge.envs.goals import JointGoal
from simjudge.envs.sim_env import SimEnv

CABINET_SCENE = {
    "objects": [
        {"name": "Cabinet", "asset": "StorageFurniture-0", "center": [0.5, 0.5]},
        {"name": "Cube", "asset": "Cube-0", "center": [0.2, 0.15]},
    ]
}


def first_movable(asset_tree):
    """The first movable joint of a tree and the link it moves."""
    joint = asset_tree.movable_joints[0]
    return joint, joint.child


@pytest.fixture
def cabinet_env():
    """A SimEnv with a cabinet, a cube and an open-the-first-joint goal."""
    env = SimEnv(CABINET_SCENE)
    tree = env.scene.objects["Cabinet"].tree
    joint, link = first_movable(tree)
    env.goal = JointGoal(object="Cabinet", joint=joint.name, link=link, direction="open")
    yield env
    env.close()
