"""Physics backends behind one protocol.

``PyBulletBackend`` is the embedded default; ``MuJoCoBackend`` (``mujoco`` ≥ 3)
and ``SapienBackend`` (``sapien`` 3, physics only without a GPU) implement the
same protocol, and one conformance suite (``tests/envs/backends/``) holds all
three to it. Backends are created through
:func:`make_backend` so that callers never import a simulator themselves.
"""

from __future__ import annotations

import os
from typing import Any

from simjudge.envs.registry import Registry

from .base import (
    BASE_LINK,
    Backend,
    BackendError,
    BodyQuery,
    CameraSpec,
    CollisionShape,
    Contact,
    JointInfo,
    RenderResult,
    body_reading_offsets,
    body_reading_size,
    read_bodies_via_getters,
)

__all__ = [
    "BASE_LINK",
    "Backend",
    "BackendError",
    "BodyQuery",
    "CameraSpec",
    "CollisionShape",
    "Contact",
    "JointInfo",
    "RenderResult",
    "SUPPORTED_BACKENDS",
    "BACKENDS",
    "UnknownBackendError",
    "available_backends",
    "default_backend",
    "body_reading_offsets",
    "body_reading_size",
    "make_backend",
    "read_bodies_via_getters",
    "render_problem",
]

SUPPORTED_BACKENDS: tuple[str, ...] = ("pybullet", "mujoco", "sapien")

BACKENDS: Registry[Backend] = Registry(
    "physics backend", plural="backends", listed_as="supported",  # error: set below
    hint=" (choose one with `--backend NAME`, SimEnv(backend=...) or $SIMJUDGE_BACKEND)")
"""The physics backends by name (:class:`simjudge.envs.registry.Registry`; plugins: entry-point
group ``simjudge.backends``). PyBullet is in the core install; MuJoCo and SAPIEN are extras."""
BACKENDS.register("pybullet", "simjudge.envs.backends.pybullet_backend:PyBulletBackend",
                  "PyBullet (core): physics, contacts, collision checks, headless rendering")
BACKENDS.register("mujoco", "simjudge.envs.backends.mujoco_backend:MuJoCoBackend",
                  "MuJoCo 3 (extra 'mujoco'): physics, EGL/OSMesa rendering",
                  extra="mujoco", requires=("mujoco",))
BACKENDS.register("sapien", "simjudge.envs.backends.sapien_backend:SapienBackend",
                  "SAPIEN 3 (extra 'sapien'): physics; rendering needs a Vulkan device",
                  extra="sapien", requires=("sapien",))

# MuJoCo chooses its OpenGL platform when it is first imported: headless EGL unless the
# user chose (osmesa, glfw); set here so that any later ``import mujoco`` sees it
os.environ.setdefault("MUJOCO_GL", "egl")


_PACKAGES = {"pybullet": "pybullet", "mujoco": "mujoco", "sapien": "sapien"}


def available_backends() -> list[str]:
    """The supported backends whose simulator package is installed here (nothing is imported)."""
    import importlib.util

    return [name for name in SUPPORTED_BACKENDS if importlib.util.find_spec(_PACKAGES[name]) is not None]


def default_backend() -> str:
    """The backend an env uses when none is named: ``$SIMJUDGE_BACKEND``, else ``pybullet``.

    Why an environment variable: every command that builds envs (execute, acquire, audit,
    judge-bench, demo) and every worker process it starts then use the backend chosen
    once, with ``simjudge --backend NAME ...``, without each layer passing it on.
    """
    return os.environ.get("SIMJUDGE_BACKEND", "").strip() or "pybullet"


def make_backend(name: str = "pybullet", **kwargs: Any) -> Backend:
    """Create a physics backend by name.

    Args:
        name: One of :data:`SUPPORTED_BACKENDS`.
        **kwargs: Passed to the backend's constructor (e.g. ``timestep``).

    Raises:
        UnknownBackendError: ``name`` is not a supported backend.
    """
    factory = BACKENDS.factory(name)
    backend: Backend = factory(**kwargs)
    return backend


def render_problem(name: str | None = None) -> str | None:
    """Why backend ``name`` (default: :func:`default_backend`) cannot render here, else None.

    Why: runs whose video is a by-product (``simjudge demo``, ``simjudge execute``) skip it
    on a backend that cannot render on this machine and say why, instead of failing a run
    whose physics works; commands that exist to render (``simjudge render``, image judges)
    call ``render`` and get its error. Only SAPIEN can be unable (no Vulkan device); the
    answer is found once per process.
    """
    if (name or default_backend()) != "sapien":
        return None
    from .sapien_render import render_unavailable, sapien_render_problem

    problem = sapien_render_problem()
    return None if problem is None else str(render_unavailable(problem))


class UnknownBackendError(BackendError, ValueError):
    """A backend name that is not one of :data:`SUPPORTED_BACKENDS`."""


BACKENDS.error = UnknownBackendError
