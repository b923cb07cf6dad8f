"""Shared fixtures: small scenes built on the real PyBullet backend.

The repository root is on ``sys.path`` (pytest's ``pythonpath``) so that tests can import
``tests.*`` helpers. The source folders there (``envs``, ``tasks``, ...) must not become a
second import path of simjudge's modules (``import envs.scene`` would be a second copy of
``simjudge.envs.scene``): :class:`_OneImportPath` refuses them with the name to use.
"""

from __future__ import annotations

import importlib.abc
import sys

import pytest

from simjudge.envs.goals import JointGoal
from simjudge.envs.sim_env import SimEnv

_SOURCE_FOLDERS = {"envs": "simjudge.envs", "tasks": "simjudge.tasks", "skills": "simjudge.skills",
                   "judges": "simjudge.judges", "assets": "simjudge.assets"}


class _OneImportPath(importlib.abc.MetaPathFinder):
    """Refuses ``import envs`` (and the other source folders) under their folder names."""

    def find_spec(self, fullname, path, target=None):
        head = fullname.partition(".")[0]
        if head in _SOURCE_FOLDERS:
            raise ImportError(f"import {_SOURCE_FOLDERS[head]}{fullname[len(head):]}, not {fullname}: "
                              "the source folders are installed as subpackages of simjudge")
        return None


sys.meta_path.insert(0, _OneImportPath())

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
