"""Collision filtering of the SAPIEN backend through PhysX's four collision groups.

SAPIEN 3 lets shapes ``A`` and ``B`` collide iff ``(A.g0 & B.g1) or (A.g1 & B.g0)`` and not
``(A.g2 & B.g2) and A.g3 == B.g3`` (lower 16 bits of ``g3``). Two uses here:

- **No self-collision** (as PyBullet, which loads URDFs without ``URDF_USE_SELF_COLLISION``,
  and the MuJoCo backend, which excludes every link pair of an articulation): every link of
  an articulation carries the articulation's own id in ``g3`` and :data:`SELF_BIT` in ``g2``,
  so its links ignore each other and nothing else, however many articulations a world holds.
- **Pairs switched off** between links of different bodies (:func:`exclude_pair`): each link
  involved gets a contact-type bit of its own in ``g0`` (besides bit 0, which every shape has,
  so it still collides with all other shapes), and its ``g1`` drops its partners' bits. The
  31 such bits are per world; a world that needs more raises a clear error.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .base import BackendError

__all__ = ["SELF_BIT", "exclude_pair", "ignore_self_collision"]

SELF_BIT = 1 << 31
"""``g2`` bit shared by every articulation's links; their ``g3`` ids keep articulations apart."""
_ALL_TYPES = 0xFFFFFFFE
"""``g1`` of a link with its own type bit: every type bit except bit 0 (see :func:`exclude_pair`)."""
_MAX_ID = 0xFFFF


def _shapes(link: Any) -> list[Any]:
    return list(link.collision_shapes)


def ignore_self_collision(links: Sequence[Any], handle: int) -> None:
    """Make the links of one articulation (body ``handle``) ignore each other only.

    Raises:
        BackendError: The world already holds 65,534 bodies (the id is 16 bits).
    """
    ident = handle + 1
    if ident >= _MAX_ID:
        raise BackendError(
            f"SAPIEN tells articulations apart by a 16-bit id and this world has {handle} bodies; "
            "call reset_world() or split the scene"
        )
    for link in links:
        for shape in _shapes(link):
            g0, g1, g2, g3 = shape.get_collision_groups()
            shape.set_collision_groups([g0, g1, g2 | SELF_BIT, (g3 & ~_MAX_ID) | ident])


def exclude_pair(first: Any, second: Any, type_bits: dict[int, int]) -> None:
    """Switch off collision between two links (component objects) of different bodies.

    A link that takes part in an exclusion gets ``g0 = 1 | t`` with a type bit ``t`` of its
    own and ``g1 = all type bits but bit 0, minus its partners' bits``: it still collides with
    plain shapes (``g0 = g1 = 1``, through their ``g1``'s bit 0) and with other such links
    (through its own bit in their ``g1``), and not with its partners (neither term matches).

    Args:
        first: One link's physics component.
        second: The other's.
        type_bits: The world's type bit per component id (updated).

    Raises:
        BackendError: All 31 type bits of this world are taken.
    """
    bits = [_type_bit(link, type_bits) for link in (first, second)]
    for link, partner_bit in ((first, bits[1]), (second, bits[0])):
        for shape in _shapes(link):
            _, g1, g2, g3 = shape.get_collision_groups()
            shape.set_collision_groups([1 | type_bits[id(link)], g1 & ~partner_bit, g2, g3])


def _type_bit(link: Any, type_bits: dict[int, int]) -> int:
    bit = type_bits.get(id(link))
    if bit is not None:
        return bit
    if len(type_bits) >= 31:
        raise BackendError(
            "SAPIEN switches off link pairs through 31 contact-type bits per world and this world has "
            "used them all; switch off fewer pairs (collision within one body is already off) or "
            "call reset_world()"
        )
    bit = 1 << (len(type_bits) + 1)
    type_bits[id(link)] = bit
    for shape in _shapes(link):
        g0, _, g2, g3 = shape.get_collision_groups()
        shape.set_collision_groups([g0, _ALL_TYPES, g2, g3])
    return bit
