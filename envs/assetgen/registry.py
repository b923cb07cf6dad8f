"""The category registry and the writer of the committed asset catalogue.

Why committed files plus a generator: scenes load plain URDF files (no
generation at run time, no hidden state), while the generator documents how
they were made and :func:`check_in_sync` proves the committed files are exactly
what the current code produces.

On-disk layout (relative to the assets directory)::

    catalogue.json                                  every asset, see below
    objects/<Category>/<asset_id>/mobility.urdf
    objects/<Category>/<asset_id>/meta.json
    objects/<Category>/<asset_id>/articulation_tree.json   (articulated only)
    objects/<Category>/<asset_id>/articulation_tree.txt    (articulated only)
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..articulation import ArticulationTree
from . import appliances, containers, furniture, gadgets, rigid
from .spec import AssetKind, CategorySpec, ParamSampler
from .urdf import ObjectBuilder

__all__ = [
    "CATEGORY_SPECS",
    "DEFAULT_PLACEMENT",
    "GENERATOR_VERSION",
    "GeneratedAsset",
    "category_spec",
    "generate_asset",
    "iter_assets",
    "generate_files",
    "generate_all",
    "check_in_sync",
]

GENERATOR_VERSION = 1
"""Bumped whenever generated files change meaning (not for mere re-generation)."""

CATEGORY_SPECS: tuple[CategorySpec, ...] = (
    furniture.CATEGORIES
    + appliances.CATEGORIES
    + containers.CATEGORIES
    + gadgets.CATEGORIES
    + rigid.CATEGORIES
)

DEFAULT_PLACEMENT: dict[str, object] = {"position": [0.1, 0.0, 0.0], "yaw": 0.0}
"""Where an articulated object is checked to be reachable: origin at world (0.1, 0, 0), yaw 0."""

_OWNED_NAMES = frozenset(
    {"mobility.urdf", "meta.json", "articulation_tree.json", "articulation_tree.txt"}
)


@dataclass(frozen=True)
class GeneratedAsset:
    """One generated instance, in memory.

    Attributes:
        asset_id: ``<Category>-<index>``.
        category: Category name.
        index: Instance index.
        kind: ``articulated`` or ``rigid``.
        urdf: URDF text.
        tree: Articulation tree (None for rigid objects).
        meta: The ``meta.json`` content.
    """

    asset_id: str
    category: str
    index: int
    kind: AssetKind
    urdf: str
    tree: ArticulationTree | None
    meta: dict

    @property
    def rel_dir(self) -> str:
        """Directory relative to the assets root (POSIX separators)."""
        return f"objects/{self.category}/{self.asset_id}"

    def files(self) -> dict[str, str]:
        """File name -> text, for this asset's directory."""
        out = {"mobility.urdf": self.urdf, "meta.json": _dump(self.meta)}
        if self.tree is not None:
            out["articulation_tree.json"] = self.tree.to_json()
            out["articulation_tree.txt"] = self.tree.to_text()
        return out


def _dump(data: object) -> str:
    return json.dumps(data, indent=2) + "\n"


def _num(x: float) -> float:
    return float(f"{x:.6g}") + 0.0


def category_spec(name: str) -> CategorySpec:
    """The registered category ``name``; ``KeyError`` lists the valid names."""
    for spec in CATEGORY_SPECS:
        if spec.name == name:
            return spec
    raise KeyError(f"unknown category {name!r}; categories are {[s.name for s in CATEGORY_SPECS]}")


def _success_text(b: ObjectBuilder, tree: ArticulationTree | None) -> str:
    """The **Success Conditions** section: what open, pressed, turned and moved mean."""
    if tree is None:
        return (
            "Lifted when its base rises at least 5 cm above its initial height; placed when "
            "its bottom centre lies within the target region and it rests there."
        )
    parts = []
    for joint in tree.movable_joints:
        link = tree.link(joint.child)
        name = f"{link.semantic} {link.name} ({joint.name})"
        if joint.type == "continuous":
            parts.append(f"{name} is turned when |{joint.name}| >= {math.pi / 2:.4g} rad.")
        elif joint.spring:
            parts.append(
                f"{name} is pressed when {joint.name} >= {0.8 * joint.upper:.4g} m; it springs "
                "back to 0 when released."
            )
        else:
            unit = "rad" if joint.type == "revolute" else "m"
            parts.append(
                f"{name} is closed when {joint.name} <= {0.05 * joint.upper:.4g} {unit} and open "
                f"when {joint.name} >= {0.6 * joint.upper:.4g} {unit} (upper {joint.upper:.4g})."
            )
    return " ".join(parts)


def generate_asset(category: str, index: int) -> GeneratedAsset:
    """Generate instance ``index`` of ``category`` (a pure function of both)."""
    spec = category_spec(category)
    if not 0 <= index < spec.n_instances:
        raise IndexError(f"{category} has instances 0..{spec.n_instances - 1}, got {index}")
    asset_id = f"{category}-{index}"
    sampler = ParamSampler(category, index)
    blueprint = spec.build(sampler, asset_id)
    b = blueprint.builder
    tree = b.to_tree(asset_id, category) if spec.kind == "articulated" else None
    lo, hi = b.bounding_box()
    meta = {
        "asset_id": asset_id,
        "category": category,
        "index": index,
        "kind": spec.kind,
        "default_fixed_base": blueprint.default_fixed_base,
        "origin": blueprint.origin,
        "default_placement": DEFAULT_PLACEMENT,
        "bbox": {
            "min": [_num(v) for v in lo],
            "max": [_num(v) for v in hi],
            "size": [_num(v) for v in hi - lo],
        },
        "mass": _num(sum(link.mass for link in b.links)),
        "params": sampler.params,
        "movable_joints": [j.name for j in tree.movable_joints] if tree else [],
        "links": b.link_meta(),
        "description": {
            "task_description": blueprint.summary,
            "randomizations": spec.randomizations,
            "success_conditions": _success_text(b, tree),
        },
        "generator": {"module": "simjudge.envs.assetgen", "version": GENERATOR_VERSION},
        **blueprint.extra,
    }
    return GeneratedAsset(asset_id, category, index, spec.kind, b.to_urdf(), tree, meta)


def iter_assets() -> Iterator[GeneratedAsset]:
    """Every instance of every registered category, in catalogue order."""
    for spec in CATEGORY_SPECS:
        for index in range(spec.n_instances):
            yield generate_asset(spec.name, index)


def _catalogue_entry(asset: GeneratedAsset) -> dict:
    files = asset.files()
    entry = {
        "asset_id": asset.asset_id,
        "category": asset.category,
        "index": asset.index,
        "kind": asset.kind,
        "dir": asset.rel_dir,
        "urdf": f"{asset.rel_dir}/mobility.urdf",
        "meta": f"{asset.rel_dir}/meta.json",
        "tree": f"{asset.rel_dir}/articulation_tree.json"
        if "articulation_tree.json" in files
        else None,
        "tree_text": f"{asset.rel_dir}/articulation_tree.txt"
        if "articulation_tree.txt" in files
        else None,
        "n_links": len(asset.meta["links"]),
        "n_joints": len(asset.meta["links"]) - 1,
        "movable_joints": asset.meta["movable_joints"],
        "default_fixed_base": asset.meta["default_fixed_base"],
        "bbox_size": asset.meta["bbox"]["size"],
    }
    return entry


def generate_files() -> dict[str, str]:
    """Relative path -> text of every file the generator owns, ``catalogue.json`` included."""
    out: dict[str, str] = {}
    entries = []
    for asset in iter_assets():
        for name, text in asset.files().items():
            out[f"{asset.rel_dir}/{name}"] = text
        entries.append(_catalogue_entry(asset))
    catalogue = {
        "format": 1,
        "generator_version": GENERATOR_VERSION,
        "n_assets": len(entries),
        "categories": {
            spec.name: {"kind": spec.kind, "n_instances": spec.n_instances}
            for spec in CATEGORY_SPECS
        },
        "assets": entries,
    }
    out["catalogue.json"] = _dump(catalogue)
    return out


def _default_dir(path: str | Path | None) -> Path:
    if path is not None:
        return Path(path)
    from ..catalogue import ASSETS_DIR

    return ASSETS_DIR


def generate_all(out_dir: str | Path | None = None, clean: bool = True) -> list[Path]:
    """Write every asset and the catalogue under ``out_dir`` (default: the package's assets).

    Args:
        out_dir: Assets root; created if missing.
        clean: Remove generator-owned files (``mobility.urdf``, ``meta.json``,
            ``articulation_tree.*``) under ``out_dir/objects`` that the
            generator no longer produces (stale instances), then empty
            directories; other files are never touched.

    Returns:
        The written paths.
    """
    root = _default_dir(out_dir)
    files = generate_files()
    written = []
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8", newline="\n")
        written.append(path)
    objects = root / "objects"
    if clean and objects.is_dir():
        for path in sorted(objects.rglob("*"), reverse=True):
            rel = path.relative_to(root).as_posix()
            if path.is_file() and rel not in files and path.name in _OWNED_NAMES:
                path.unlink()
            elif path.is_dir() and not any(path.iterdir()):
                path.rmdir()
    return written


def check_in_sync(assets_dir: str | Path | None = None) -> list[str]:
    """Compare the committed files with a fresh generation, byte for byte.

    Returns:
        One line per problem (missing, different or stale file); empty when
        in sync. Fix with ``python -m simjudge.envs.assetgen``.
    """
    root = _default_dir(assets_dir)
    files = generate_files()
    problems = []
    for rel, text in files.items():
        path = root / rel
        if not path.is_file():
            problems.append(f"missing: {rel}")
        elif path.read_bytes() != text.encode("utf-8"):
            problems.append(f"differs: {rel}")
    objects = root / "objects"
    if objects.is_dir():
        for path in sorted(objects.rglob("*")):
            rel = path.relative_to(root).as_posix()
            if path.is_file() and rel not in files:
                problems.append(f"stale: {rel}")
    return problems
