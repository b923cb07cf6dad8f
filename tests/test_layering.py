"""The layering contract (docs/design.md), checked over the real import graph.

Every ``import`` and ``from ... import`` statement in the source tree counts, wherever it
is written: module top, inside functions (lazy imports) and under ``TYPE_CHECKING``. A
module belongs to the most specific layer whose prefix it has.

    envs        <- nothing else of simjudge
    tasks       <- envs
    llm         <- nothing else of simjudge
    skills      <- envs, tasks
    judges      <- envs, tasks, llm
    policies    <- envs, tasks, skills, judges
    executors   <- tasks
    pipelines   <- all of the above
    simjudge    <- everything (the CLI and the package root); nothing imports it

Two stdlib-only leaves may be imported from any layer: the exception root
``simjudge.envs.errors`` and the one atomic write ``simjudge.tasks.spec.io``. The package
root's alias table of moved modules (``simjudge._moved``) is part of the root.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = {"simjudge": "simjudge", "envs": "simjudge.envs", "tasks": "simjudge.tasks",
           "skills": "simjudge.skills", "judges": "simjudge.judges"}

LAYERS = ("simjudge.envs", "simjudge.tasks", "simjudge.llm", "simjudge.skills",
          "simjudge.judges", "simjudge.policies", "simjudge.executors", "simjudge.pipelines",
          "simjudge")
_BELOW_PIPELINES = {"simjudge.envs", "simjudge.tasks", "simjudge.llm", "simjudge.skills",
                    "simjudge.judges", "simjudge.policies", "simjudge.executors"}
ALLOWED: dict[str, set[str]] = {
    "simjudge.envs": set(),
    "simjudge.tasks": {"simjudge.envs"},
    "simjudge.llm": set(),
    "simjudge.skills": {"simjudge.envs", "simjudge.tasks"},
    "simjudge.judges": {"simjudge.envs", "simjudge.tasks", "simjudge.llm"},
    "simjudge.policies": {"simjudge.envs", "simjudge.tasks", "simjudge.skills", "simjudge.judges"},
    "simjudge.executors": {"simjudge.tasks"},
    "simjudge.pipelines": _BELOW_PIPELINES,
    "simjudge": _BELOW_PIPELINES | {"simjudge.pipelines"},
}
LEAVES: dict[str, set[str]] = {
    "simjudge.envs.errors": set(LAYERS),
    "simjudge.tasks.spec.io": set(LAYERS) - {"simjudge.envs"},
}
"""Stdlib-only leaf modules and the layers that may import them."""


def layer_of(module: str) -> str:
    """The most specific layer that ``module`` belongs to."""
    for layer in LAYERS:
        if module == layer or module.startswith(layer + "."):
            return layer
    raise AssertionError(f"{module} is in no layer")


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = [FOLDERS[rel.parts[0]], *rel.parts[1:]]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path) -> list[tuple[int, str]]:
    """(line, imported module) for every simjudge import in a file, lazy ones included."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            # `from pkg import sub` may import a submodule: count the most specific name
            found += [(node.lineno, f"{target}.{a.name}") for a in node.names]
    return [(line, m) for line, m in found if m == "simjudge" or m.startswith("simjudge.")]


def violations() -> list[str]:
    found = []
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            src = layer_of(module_name(path))
            for line, target in imports_of(path):
                if any((target == leaf or target.startswith(leaf + ".")) and src in users
                       for leaf, users in LEAVES.items()):
                    continue
                dst = layer_of(target)
                if dst == src or dst in ALLOWED[src]:
                    continue
                found.append(f"{path.relative_to(ROOT)}:{line}: {src} imports {target} ({dst})")
    return found


def test_layers_import_only_what_design_allows():
    assert violations() == []


def test_no_package_imports_the_root():
    bad = [v for v in violations() if v.endswith("(simjudge)")]
    assert bad == []


@pytest.mark.parametrize(("src", "target", "ok"), [
    ("simjudge.skills.executor", "simjudge.tasks.spec.Solution", True),
    ("simjudge.skills.executor", "simjudge.pipelines.acquire", False),
    ("simjudge.judges.episode", "simjudge", False),
    ("simjudge.envs.sim_env", "simjudge.tasks.spec.io", False),
    ("simjudge.llm.replay", "simjudge.envs.scene", False),
])
def test_contract_table_says_what_it_means(src, target, ok):
    assert (layer_of(target) in ALLOWED[layer_of(src)] or layer_of(target) == layer_of(src)) is ok
