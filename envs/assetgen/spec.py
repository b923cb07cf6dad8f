"""Deterministic parameter sampling and the records that category builders return.

Why not ``numpy.random``: instance ``i`` of category ``C`` must be a pure
function of ``(C, i)`` on every machine and numpy version, forever, because the
generated files are committed and checked byte-for-byte. Each parameter is
drawn from SHA-256 of ``"C|i|name"``: stable across platforms and versions, and
adding a parameter to a builder does not shift the values of the others.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeVar

from .urdf import ObjectBuilder

__all__ = ["ParamSampler", "Blueprint", "CategorySpec", "AssetKind"]

T = TypeVar("T")
AssetKind = Literal["articulated", "rigid"]


class ParamSampler:
    """Named, reproducible random parameters of one asset instance.

    Every sampled value is also recorded in :attr:`params` so that it lands in
    the instance's ``meta.json``.

    Args:
        category: Category name.
        index: Instance index within the category.
    """

    def __init__(self, category: str, index: int) -> None:
        self.category = category
        self.index = int(index)
        self.params: dict[str, float | int | str | bool] = {}

    def _unit(self, name: str) -> float:
        digest = hashlib.sha256(f"{self.category}|{self.index}|{name}".encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2.0**64

    def uniform(self, name: str, low: float, high: float, step: float = 0.001) -> float:
        """A value in ``[low, high]`` rounded to a multiple of ``step`` (mm by default)."""
        value = low + self._unit(name) * (high - low)
        value = min(max(round(value / step) * step, low), high)
        value = float(f"{value:.6g}")
        self.params[name] = value
        return value

    def integer(self, name: str, low: int, high: int) -> int:
        """An integer in ``[low, high]`` inclusive."""
        value = low + min(int(self._unit(name) * (high - low + 1)), high - low)
        self.params[name] = value
        return value

    def choice(self, name: str, options: Sequence[T]) -> T:
        """One of ``options`` (recorded as given)."""
        value = options[min(int(self._unit(name) * len(options)), len(options) - 1)]
        self.params[name] = value  # type: ignore[assignment]
        return value

    def cycle(self, name: str, options: Sequence[T]) -> T:
        """``options[index % len(options)]``: guarantees every option among the first instances."""
        value = options[self.index % len(options)]
        self.params[name] = value  # type: ignore[assignment]
        return value

    def flag(self, name: str, probability: float = 0.5) -> bool:
        """A boolean that is true with ``probability``."""
        value = self._unit(name) < probability
        self.params[name] = value
        return value


@dataclass
class Blueprint:
    """What a category builder returns for one instance.

    Attributes:
        builder: The filled object builder (links, joints, shapes).
        summary: One or two sentences for the **Task Description** section:
            what the object is and what can be done with it.
        default_fixed_base: Whether scenes should load it with a fixed base
            (furniture and appliances) or free (things the robot may move).
        origin: Where the object frame sits, ``bottom_centre`` unless noted.
        extra: Additional meta fields (e.g. the table's top height).
    """

    builder: ObjectBuilder
    summary: str
    default_fixed_base: bool = True
    origin: str = "bottom_centre"
    extra: dict = field(default_factory=dict)


@dataclass(frozen=True)
class CategorySpec:
    """A registered category.

    Attributes:
        name: PartNet-Mobility style category name (``StorageFurniture``).
        kind: ``articulated`` or ``rigid``.
        build: ``build(sampler, asset_id) -> Blueprint``; must use only the sampler
            for randomness.
        n_instances: How many instances are generated.
        randomizations: Text for the **Randomizations** section.
    """

    name: str
    kind: AssetKind
    build: Callable[[ParamSampler, str], Blueprint]
    n_instances: int
    randomizations: str
