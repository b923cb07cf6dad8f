"""World conventions shared by every backend, asset and scene.

Why a module of constants: scene building, asset generation, the robot and the
tasks must agree on where the table is and which way objects face, otherwise a
handle generated "in front" ends up out of the Panda's reach.

Frame: right-handed, z up, metres, radians. Quaternions are ``(x, y, z, w)``.

- The table top is the plane ``z = 0``; the table body lies below it.
- The robot base sits on the table at :data:`ROBOT_BASE_POSITION`, facing +x.
- Articulated objects are authored with their origin at the bottom centre and
  their *front* (doors, drawers, handles, buttons) facing -x, i.e. towards the
  robot at the default orientation.
- Normalised table placements ``(u, v) in [0, 1]^2`` map linearly onto
  :data:`PLACEMENT_X` x :data:`PLACEMENT_Y`.
"""

from __future__ import annotations

__all__ = [
    "TABLE_SIZE",
    "TABLE_HEIGHT",
    "ROBOT_BASE_POSITION",
    "PLACEMENT_X",
    "PLACEMENT_Y",
    "PHYSICS_TIMESTEP",
    "GRAVITY",
    "normalized_to_table_xy",
]

TABLE_SIZE: tuple[float, float] = (1.6, 1.3)
"""Table top extent (x, y) in metres, centred on the world origin."""

TABLE_HEIGHT: float = 0.7
"""Distance from the floor to the table top (the floor is at ``z = -TABLE_HEIGHT``)."""

ROBOT_BASE_POSITION: tuple[float, float, float] = (-0.6, 0.0, 0.0)
"""Panda base on the table top, facing +x."""

PLACEMENT_X: tuple[float, float] = (-0.2, 0.4)
"""World x range that normalised placement ``u`` in [0, 1] maps to."""

PLACEMENT_Y: tuple[float, float] = (-0.45, 0.45)
"""World y range that normalised placement ``v`` in [0, 1] maps to."""

PHYSICS_TIMESTEP: float = 0.01
"""100 Hz physics, as RoboGen."""

GRAVITY: float = -9.81


def normalized_to_table_xy(u: float, v: float) -> tuple[float, float]:
    """Map a normalised table placement to world (x, y).

    Args:
        u: Depth coordinate in [0, 1]; 0 is nearest the robot.
        v: Lateral coordinate in [0, 1]; 0 is the robot's right (-y).

    Returns:
        The world ``(x, y)`` of the placement.
    """
    x = PLACEMENT_X[0] + u * (PLACEMENT_X[1] - PLACEMENT_X[0])
    y = PLACEMENT_Y[0] + v * (PLACEMENT_Y[1] - PLACEMENT_Y[0])
    return x, y
