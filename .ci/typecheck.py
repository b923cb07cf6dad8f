"""Type-check simjudge under its real import names (``make typecheck``).

The repo's top-level folders are installed as subpackages of ``simjudge`` through
setuptools' ``package-dir`` (``envs/`` is ``simjudge.envs``, ...). Static tools do not read
that mapping (and mypy cannot follow the import hook of an editable install), so this script
builds a tree of symlinks that has the installed shape::

    build/typecheck/simjudge/__init__.py -> ../../../simjudge/__init__.py   (one per entry)
    build/typecheck/simjudge/envs        -> ../../../envs                   (one per mapping)

The mapping is read from ``[tool.setuptools.package-dir]`` in pyproject.toml, and the tree is
rebuilt on every run, so adding a module or a mapped folder needs no reinstall and no edit
here. mypy then runs on ``-p simjudge`` with ``mypy_path = build/typecheck`` (pyproject.toml,
``[tool.mypy]``), and the paths in its report are mapped back onto the real files
(``build/typecheck/simjudge/envs/scene.py`` -> ``envs/scene.py``).

Usage: ``python .ci/typecheck.py [extra mypy args]``; ``--tree-only`` only builds the tree
(for editors: pyright/Pylance read it through ``extraPaths``). Exit status is mypy's.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TREE = ROOT / "build" / "typecheck"
SKIP = {"__pycache__"}


def package_dirs() -> dict[str, str]:
    """``[tool.setuptools.package-dir]`` of pyproject.toml: import name -> repo folder."""
    with open(ROOT / "pyproject.toml", "rb") as f:
        config = tomllib.load(f)
    mapping: dict[str, str] = config["tool"]["setuptools"]["package-dir"]
    return mapping


def link(target: Path, at: Path) -> None:
    """Create the relative symlink ``at -> target``."""
    at.parent.mkdir(parents=True, exist_ok=True)
    at.symlink_to(os.path.relpath(target, at.parent), target_is_directory=target.is_dir())


def build_tree() -> dict[str, str]:
    """(Re)build the symlink tree; returns tree prefix -> real prefix (repo-relative, '/')."""
    if TREE.exists():
        shutil.rmtree(TREE)  # unlinks the symlinks, never follows them
    mapping = package_dirs()
    prefixes: dict[str, str] = {}
    # Parents before children: a mapped folder is linked as a whole, its parent package
    # (a real folder mapped onto the same name, like simjudge/ -> simjudge) entry by entry.
    parents = {name.rpartition(".")[0] for name in mapping if "." in name}
    for name in sorted(mapping, key=lambda n: n.count(".")):
        folder = ROOT / mapping[name]
        at = TREE.joinpath(*name.split("."))
        tree_rel = at.relative_to(ROOT).as_posix()
        real_rel = folder.relative_to(ROOT).as_posix()
        if name in parents:
            at.mkdir(parents=True, exist_ok=True)
            for entry in sorted(folder.iterdir()):
                if entry.name in SKIP or entry.name.startswith("."):
                    continue
                if (at / entry.name).exists():
                    continue
                link(entry, at / entry.name)
        elif not at.exists() and not at.is_symlink():
            link(folder, at)
        prefixes[tree_rel + "/"] = "" if real_rel == "." else real_rel + "/"
    return prefixes


def main(argv: list[str]) -> int:
    prefixes = build_tree()
    if "--tree-only" in argv:
        print(f"typecheck tree: {TREE.relative_to(ROOT)}")
        return 0
    # Longest prefix first, so build/typecheck/simjudge/envs/ wins over build/typecheck/simjudge/.
    ordered = sorted(prefixes, key=len, reverse=True)
    pattern = re.compile("|".join(re.escape(p) for p in ordered))
    cmd = [sys.executable, "-m", "mypy", *argv]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    assert proc.stdout is not None
    for line in proc.stdout:
        sys.stdout.write(pattern.sub(lambda m: prefixes[m.group(0)], line))
    return proc.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
