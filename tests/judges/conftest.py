"""Fixtures for judge tests: real task envs built on the PyBullet backend."""

from __future__ import annotations

import pytest

from simjudge.tasks.spec import make_task_env


@pytest.fixture
def drawer_env():
    """``OpenDrawer-v0`` (StorageFurniture, prismatic joint_0, handle link_1)."""
    env = make_task_env("OpenDrawer-v0")
    yield env
    env.close()


@pytest.fixture
def short_drawer_env():
    """``OpenDrawer-v0`` with a 6-step horizon, for episodes that end by truncation."""
    env = make_task_env("OpenDrawer-v0", horizon=6)
    yield env
    env.close()
