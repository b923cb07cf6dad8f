"""Packaging details that pyproject.toml cannot state: the package list and the compiled parts.

Packages are derived from ``[tool.setuptools.package-dir]``: every folder with an
``__init__.py`` under a mapped folder is a package, so a new sub-package is never left out
of the wheel (``tests/test_packaging.py`` builds the wheel and checks every module is in it).

One optional compiled accelerator: the arm's IK step (``envs/_dls.c``), the compiled twin of
``simjudge.envs.dls`` (bit-equal, tested). It is built when a C compiler is there and skipped
otherwise (``optional=True``): simjudge imports and runs without it.
-ffp-contract=off: no fused multiply-adds, so its arithmetic, like the Python step's, is the
same on every x86-64 CPU.
"""

import tomllib
from pathlib import Path

from setuptools import Extension, setup

HERE = Path(__file__).resolve().parent
FLAGS = ["-O2", "-ffp-contract=off", "-fno-fast-math"]


def mapped_packages() -> list[str]:
    """Every package under the folders that ``package-dir`` maps onto import names."""
    table = tomllib.loads((HERE / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    found = set()
    for name, folder in table.items():
        root = HERE / folder
        for init in root.rglob("__init__.py"):
            rel = init.parent.relative_to(root)
            if any(part.startswith((".", "_")) or part == "__pycache__" for part in rel.parts):
                continue
            found.add(".".join([name, *rel.parts]))
        found.add(name)
    return sorted(found)


setup(
    packages=mapped_packages(),
    ext_modules=[
        Extension("simjudge.envs._dls", sources=["envs/_dls.c"], extra_compile_args=FLAGS,
                  optional=True),
    ],
)
