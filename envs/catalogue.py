"""The asset catalogue: find generated objects by id or category and load their data.

Why a catalogue instead of globbing folders: task proposers, scene builders and
tests need one authoritative list of assets (ids, kinds, URDF paths,
articulation trees, interaction points), and a mistyped id must fail with the
closest valid names rather than a bare ``FileNotFoundError``.

Example:
    >>> from simjudge.envs.catalogue import default_catalogue
    >>> cat = default_catalogue()
    >>> entry = cat.get("Microwave-0")
    >>> entry.kind, entry.urdf_path.name
    ('articulated', 'mobility.urdf')
    >>> entry.tree.link("base").kind
    'heavy'
"""

from __future__ import annotations

import difflib
import functools
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .articulation import ArticulationTree
from .errors import SimjudgeError

__all__ = [
    "ASSETS_DIR",
    "AssetEntry",
    "AssetCatalogue",
    "UnknownAssetError",
    "default_catalogue",
]

ASSETS_DIR: Path = Path(__file__).resolve().parent.parent / "assets"
"""The assets root: ``<repo>/assets`` in a checkout, ``simjudge/assets`` when installed."""


class UnknownAssetError(SimjudgeError, KeyError):
    """An asset id or category that the catalogue does not contain."""

    def __init__(self, what: str, name: str, valid: list[str]) -> None:
        close = difflib.get_close_matches(name, valid, n=5, cutoff=0.5)
        hint = f" Did you mean {close}?" if close else ""
        shown = valid if len(valid) <= 20 else valid[:20] + ["..."]
        self.message = f"unknown {what} {name!r}.{hint} Valid {what}s: {shown}"
        super().__init__(self.message)

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True)
class AssetEntry:
    """One catalogued asset.

    Attributes:
        asset_id: ``<Category>-<index>``, e.g. ``StorageFurniture-0``.
        category: PartNet-Mobility style category.
        kind: ``articulated`` or ``rigid``.
        urdf_path: Absolute path of ``mobility.urdf``.
        tree: Semantic articulation tree (None for rigid objects).
        meta: Contents of ``meta.json`` (params, bbox, per-link ``interaction``
            points, ``default_fixed_base``, description sections).
    """

    asset_id: str
    category: str
    kind: str
    urdf_path: Path
    tree: ArticulationTree | None
    meta: dict[str, Any]

    @property
    def default_fixed_base(self) -> bool:
        """Whether scenes should load this asset with a fixed base."""
        return bool(self.meta.get("default_fixed_base", self.kind == "articulated"))

    @property
    def movable_joints(self) -> list[str]:
        """Names of the non-fixed joints."""
        return list(self.meta.get("movable_joints", []))

    def interaction(self, link: str) -> dict[str, Any] | None:
        """The link's ``{"point", "normal"}`` contact in its own frame, or None."""
        links = self.meta.get("links", {})
        if link not in links:
            raise UnknownAssetError(f"link of {self.asset_id}", link, sorted(links))
        contact: dict[str, Any] | None = links[link].get("interaction")
        return contact


class AssetCatalogue:
    """The assets listed in ``<root>/catalogue.json``.

    Args:
        root: Assets directory holding ``catalogue.json`` and ``objects/``.

    Raises:
        FileNotFoundError: ``catalogue.json`` is missing; the message says how
            to generate it.
    """

    def __init__(self, root: str | Path = ASSETS_DIR) -> None:
        self.root = Path(root)
        path = self.root / "catalogue.json"
        if not path.is_file():
            raise FileNotFoundError(
                f"no asset catalogue at {path}; generate it with `python -m simjudge.envs.assetgen`"
            )
        data = json.loads(path.read_text(encoding="utf-8"))
        self._entries: dict[str, AssetEntry] = {}
        for item in data["assets"]:
            tree = None
            if item.get("tree"):
                tree = ArticulationTree.from_json(
                    (self.root / item["tree"]).read_text(encoding="utf-8")
                )
            meta = json.loads((self.root / item["meta"]).read_text(encoding="utf-8"))
            self._entries[item["asset_id"]] = AssetEntry(
                asset_id=item["asset_id"],
                category=item["category"],
                kind=item["kind"],
                urdf_path=(self.root / item["urdf"]).resolve(),
                tree=tree,
                meta=meta,
            )

    def entries(self, kind: str | None = None) -> list[AssetEntry]:
        """All entries in catalogue order, optionally only ``articulated`` or ``rigid``."""
        return [e for e in self._entries.values() if kind is None or e.kind == kind]

    def get(self, asset_id: str) -> AssetEntry:
        """The entry ``asset_id``; raises :class:`UnknownAssetError` with close matches."""
        try:
            return self._entries[asset_id]
        except KeyError:
            raise UnknownAssetError("asset", asset_id, list(self._entries)) from None

    def categories(self) -> list[str]:
        """Category names in catalogue order."""
        return list(dict.fromkeys(e.category for e in self._entries.values()))

    def by_category(self, category: str) -> list[AssetEntry]:
        """Entries of one category; raises :class:`UnknownAssetError` for unknown names."""
        found = [e for e in self._entries.values() if e.category == category]
        if not found:
            raise UnknownAssetError("category", category, self.categories())
        return found

    def __contains__(self, asset_id: object) -> bool:
        return asset_id in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[AssetEntry]:
        return iter(self._entries.values())


@functools.lru_cache(maxsize=1)
def default_catalogue() -> AssetCatalogue:
    """The catalogue of the packaged assets, loaded once."""
    return AssetCatalogue(ASSETS_DIR)
