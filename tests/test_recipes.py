"""The contributor guide's five recipes, followed from scratch in a copy of the repository.

For each recipe of ``docs/contributing.md`` the files it shows (blocks with
``title="PATH"``; ``<!-- recipe: append -->`` before a block appends to an existing file)
are written into a temporary copy, then its checks (blocks marked ``<!-- test: recipe -->``)
run against that copy, and so do the layering test, ruff on the new files and the docs build.
The copy is imported through its own symlink tree of the installed shape
(``.ci/typecheck.py --tree-only``) put first on ``PYTHONPATH``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "docs" / "contributing.md"
_BLOCK = re.compile(r"(?P<before>[^\n]*)\n```(?P<info>[^\n]*)\n(?P<body>.*?)\n```", re.S)
_IGNORE = shutil.ignore_patterns(".venv", ".git", "runs", "site", "build", "__pycache__",
                                 ".pytest_cache", ".ruff_cache", ".mypy_cache", "*.egg-info")


def recipe_steps() -> tuple[list[tuple[str, str, bool]], list[tuple[str, str]]]:
    """(path, text, append) of every file block and (language, code) of every check."""
    files, checks = [], []
    for m in _BLOCK.finditer(GUIDE.read_text()):
        info, body = m.group("info").strip(), m.group("body")
        title = re.search(r'title="([^"]+)"', info)
        if title:
            files.append((title.group(1), body + "\n", "recipe: append" in m.group("before")))
        elif "test: recipe" in m.group("before"):
            checks.append((info.split()[0], body))
    return files, checks


@pytest.mark.slow
def test_the_five_recipes_work_from_scratch(tmp_path):
    files, checks = recipe_steps()
    assert len(checks) == 5 and len(files) >= 9
    copy = tmp_path / "repo"
    shutil.copytree(ROOT, copy, ignore=_IGNORE, symlinks=True)
    written = []
    for rel, text, append in files:
        path = copy / rel
        assert path.exists() == append, f"{rel}: the guide says to {'edit' if append else 'create'} it"
        with path.open("a" if append else "w") as fh:
            fh.write(("\n\n" if append else "") + text)
        written.append(rel)
    python = str(ROOT / ".venv" / "bin" / "python")
    subprocess.run([python, ".ci/typecheck.py", "--tree-only"], cwd=copy, check=True,
                   capture_output=True)
    env = {**os.environ, "PYTHONPATH": str(copy / "build" / "typecheck"),
           "PATH": f"{ROOT / '.venv' / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    env.pop("SIMJUDGE_BACKEND", None)
    where = subprocess.run([python, "-c", "import simjudge; print(simjudge.__file__)"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, check=True)
    assert str(copy) in where.stdout, where.stdout  # the copy is what is imported
    work = tmp_path / "work"  # not the copy's root, whose simjudge/ folder would shadow the tree
    work.mkdir()
    for language, code in checks:
        command = [python, "-c", code] if language == "python" else ["bash", "-euo", "pipefail",
                                                                     "-c", code]
        done = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, f"recipe check failed:\n{code}\n{done.stdout[-2000:]}{done.stderr[-2000:]}"
    for command in ([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_layering.py"],
                    [str(ROOT / ".venv" / "bin" / "ruff"), "check", *(w for w in written if w.endswith(".py"))],
                    [str(ROOT / ".venv" / "bin" / "mkdocs"), "build", "--strict", "--site-dir",
                     str(tmp_path / "site")]):
        done = subprocess.run(command, cwd=copy, env=env, capture_output=True, text=True,
                              timeout=900)
        assert done.returncode == 0, f"{command[0]}: {done.stdout[-2000:]}{done.stderr[-2000:]}"
