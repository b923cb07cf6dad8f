"""Procedural articulated and rigid assets built from primitive shapes.

Why procedural: PartNet-Mobility cannot be downloaded here, so simjudge
generates its own PartNet-Mobility-like objects (StorageFurniture, Microwave,
Oven, Refrigerator, Box, TrashCan, Toilet, Faucet, Lamp, Laptop, Door, Window,
Dispenser, Kettle, ButtonPanel, Safe, FoldingChair) plus small rigid objects and
the table. Instance ``i`` of category ``C`` is a pure function of ``(C, i)``; the
generated files are committed under ``assets/`` and loaded through
:mod:`simjudge.envs.catalogue`. Regenerate with ``python -m simjudge.envs.assetgen``.
"""

from __future__ import annotations

from .registry import (
    CATEGORY_SPECS,
    DEFAULT_PLACEMENT,
    GENERATOR_VERSION,
    GeneratedAsset,
    category_spec,
    check_in_sync,
    generate_all,
    generate_asset,
    generate_files,
    iter_assets,
)
from .spec import Blueprint, CategorySpec, ParamSampler
from .urdf import Interaction, ObjectBuilder

__all__ = [
    # registry and files
    "CATEGORY_SPECS",
    "DEFAULT_PLACEMENT",
    "GENERATOR_VERSION",
    "GeneratedAsset",
    "category_spec",
    "check_in_sync",
    "generate_all",
    "generate_asset",
    "generate_files",
    "iter_assets",
    # building blocks for new categories
    "Blueprint",
    "CategorySpec",
    "Interaction",
    "ObjectBuilder",
    "ParamSampler",
]
