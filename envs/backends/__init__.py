"""Physics backends behind one protocol.

``PyBulletBackend`` is the embedded default. Backends are created through
:func:`make_backend` so that callers never import a simulator themselves.
"""

from __future__ import annotations

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
    "body_reading_offsets",
    "body_reading_size",
    "make_backend",
    "read_bodies_via_getters",
]

SUPPORTED_BACKENDS: tuple[str, ...] = ("pybullet",)


def make_backend(name: str = "pybullet", **kwargs) -> Backend:
    """Create a physics backend by name.

    Args:
        name: One of :data:`SUPPORTED_BACKENDS`.
        **kwargs: Passed to the backend's constructor (e.g. ``timestep``).

    Raises:
        ValueError: ``name`` is not a supported backend.
    """
    if name == "pybullet":
        from .pybullet_backend import PyBulletBackend

        return PyBulletBackend(**kwargs)
    raise ValueError(
        f"unknown physics backend {name!r}; supported backends are {list(SUPPORTED_BACKENDS)}"
    )
