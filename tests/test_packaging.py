"""The wheel carries every module, and each module has one import path.

Why: the package list used to be kept by hand, and a new sub-package was left out of the
wheel silently; and the repository root on ``sys.path`` made ``import envs.scene`` a second
copy of ``simjudge.envs.scene``.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _expected_modules() -> set[str]:
    table = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    found = set()
    for name, folder in table.items():
        for path in (ROOT / folder).rglob("*.py"):
            rel = path.relative_to(ROOT / folder)
            if "__pycache__" in rel.parts or not (path.parent / "__init__.py").exists():
                continue
            found.add("/".join([*name.split("."), *rel.parts]))
    return found


def test_the_wheel_holds_every_module(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(tmp_path), str(ROOT)], check=True, capture_output=True)
    (wheel,) = tmp_path.glob("simjudge-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = sorted(_expected_modules() - names)
    assert not missing, f"modules missing from the wheel: {missing[:10]}"
    assert "simjudge/pipelines/report/templates/report.html.j2" in names or any(
        n.startswith("simjudge/pipelines/report/templates/") for n in names)
    assert any(n.startswith("simjudge/tasks/library/") and n.endswith(".yaml") for n in names)


def test_a_new_subpackage_is_found_without_editing_a_list():
    src = (ROOT / "setup.py").read_text().split("\nsetup(")[0]
    namespace: dict[str, object] = {"__file__": str(ROOT / "setup.py")}
    exec(compile(src, "setup.py", "exec"), namespace)
    packages = namespace["mapped_packages"]()
    for package in ("simjudge.pipelines.arena", "simjudge.policies", "simjudge.llm",
                    "simjudge.executors", "simjudge.tasks.spec", "simjudge.envs.codegen"):
        assert package in packages
    inits = {p.parent for p in (ROOT / "judges").rglob("__init__.py")}
    assert len([p for p in packages if p.startswith("simjudge.judges")]) == len(inits)


def test_source_folders_are_not_a_second_import_path():
    with pytest.raises(ImportError, match="import simjudge.envs, not envs"):
        __import__("envs.scene")


def test_old_paths_of_moved_modules_are_the_new_modules():
    import simjudge.executors.serial as new_serial
    import simjudge.pipelines.arena.store as new_store
    import simjudge.tasks.arena.store as old_store
    import simjudge.tasks.executors.serial as old_serial

    assert old_store is new_store and old_serial is new_serial
    assert sys.modules["simjudge.tasks.arena.store"] is new_store
