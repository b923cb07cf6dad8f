"""Every Python and shell block of the README and the docs site runs, and the site builds.

Why: the README's examples had rotted (``from simjudge.tasks.registry import ...`` raised
``ModuleNotFoundError``) and no test ran them.

How blocks run:

- A page's ``python`` blocks run in order in one fresh interpreter (a later block may use
  what an earlier one made), in a temporary folder, with the repository's ``.venv`` Python.
- Each ``bash`` block runs with ``bash -euo pipefail`` in its own temporary folder, with the
  venv's ``bin`` first on ``PATH`` (so ``simjudge`` and ``python`` are the project's) and
  ``tests/`` linked in (blocks name fixtures as a user in the checkout would).
- An HTML comment on the line before a block marks it: ``<!-- test: slow -->`` (the slow set,
  ``make test-slow``), ``<!-- test: llm -->`` (needs the embedded model: ``make test-llm``),
  ``<!-- test: ci -->`` (the README's set-up commands, which CI itself runs as ``bash .ci/run``;
  never run from here), ``<!-- test: server -->`` (starts a server: run in the slow set).
  ``<!-- test: recipe -->`` marks a check of the contributor guide's recipes, which
  ``tests/test_recipes.py`` runs in a copy of the repository after writing the recipe's files.
- A block with ``title="PATH"`` is a file of a recipe (written, not run here); blocks of other
  languages (``yaml``, ``json``, ``text``) are data, not run.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
RUN_LANGUAGES = {"python": "python", "py": "python", "bash": "bash", "sh": "bash", "shell": "bash"}
MARKS = {"slow", "llm", "ci", "server", "recipe"}
_FENCE = re.compile(r"^(?P<indent> *)```(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=indent)```[ \t]*$",
                    re.S | re.M)
_MARK = re.compile(r"<!--\s*test:\s*(?P<mark>[\w-]+)\s*-->\s*$")


@dataclass(frozen=True)
class Block:
    """One fenced block of a page."""

    page: Path
    line: int
    language: str
    code: str
    mark: str

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks_of(page: Path) -> list[Block]:
    """The runnable blocks of a page, with their marks."""
    text = page.read_text()
    found = []
    for match in _FENCE.finditer(text):
        info = match.group("info").strip()
        language = (info.split() or [""])[0].lower()
        if language not in RUN_LANGUAGES or "title=" in info:
            continue
        before = text[: match.start()].rstrip("\n").splitlines()
        mark = ""
        if before and (m := _MARK.search(before[-1])):
            mark = m.group("mark")
            assert mark in MARKS, f"{page.name}: unknown test mark {mark!r}; use one of {MARKS}"
        indent = len(match.group("indent"))
        code = "\n".join(line[indent:] for line in match.group("body").splitlines())
        found.append(Block(page, text.count("\n", 0, match.start()) + 1,
                           RUN_LANGUAGES[language], code, mark))
    return found


ALL = [b for page in PAGES for b in blocks_of(page)]


def _env() -> dict[str, str]:
    venv_bin = ROOT / ".venv" / "bin"
    env = {**os.environ, "PYTHONPATH": "", "MPLBACKEND": "Agg",
           "PATH": f"{venv_bin}{os.pathsep}{os.environ.get('PATH', '')}",
           "SIMJUDGE_LLM_THREADS": "1"}
    env.pop("SIMJUDGE_BACKEND", None)
    return env


def _python() -> str:
    venv = ROOT / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


def _run_python(blocks: list[Block], cwd: Path, timeout: float) -> None:
    source = []
    for block in blocks:
        source.append(f"# --- {block.id}\n{block.code}\n")
    done = subprocess.run([_python(), "-c", "\n".join(source)], cwd=cwd, env=_env(),
                          capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, (f"{blocks[0].page.name}: python blocks failed\n"
                                  f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}")


def _run_bash(block: Block, cwd: Path, timeout: float) -> None:
    (cwd / "tests").symlink_to(ROOT / "tests")  # blocks name fixtures as from the checkout
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", block.code], cwd=cwd, env=_env(),
                          capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, (f"{block.id}: shell block failed\n$ {block.code}\n"
                                  f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}")


def _pages_with(mark: str) -> list[Path]:
    return sorted({b.page for b in ALL if b.language == "python" and b.mark == mark})


def _python_of(page: Path, mark: str) -> list[Block]:
    return [b for b in ALL if b.page == page and b.language == "python" and b.mark == mark]


def _param(blocks, marks=()):
    return [pytest.param(b, id=b.id, marks=list(marks)) for b in blocks]


def test_the_readme_is_short_and_every_page_is_in_the_site():
    assert len((ROOT / "README.md").read_text().splitlines()) <= 250
    nav = (ROOT / "mkdocs.yml").read_text()
    for page in (ROOT / "docs").rglob("*.md"):
        assert str(page.relative_to(ROOT / "docs")) in nav, f"{page} is not in mkdocs.yml's nav"


def test_the_readme_names_the_two_setup_commands():
    ci_blocks = [b for b in blocks_of(ROOT / "README.md") if b.mark == "ci"]
    assert len(ci_blocks) == 1 and ci_blocks[0].code.split() == ["make", "demo", "make", "test"]


@pytest.mark.parametrize("page", _pages_with(""), ids=lambda p: str(p.relative_to(ROOT)))
def test_python_blocks_run(page, tmp_path):
    _run_python(_python_of(page, ""), tmp_path, timeout=600)


@pytest.mark.slow
@pytest.mark.parametrize("page", _pages_with("slow") + _pages_with("server"),
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_slow_python_blocks_run(page, tmp_path):
    blocks = _python_of(page, "slow") + _python_of(page, "server")
    _run_python(blocks, tmp_path, timeout=1800)


@pytest.mark.llm
@pytest.mark.parametrize("page", _pages_with("llm"), ids=lambda p: str(p.relative_to(ROOT)))
def test_llm_python_blocks_run(page, tmp_path):
    _run_python(_python_of(page, "llm"), tmp_path, timeout=3600)


@pytest.mark.parametrize("block", _param([b for b in ALL if b.language == "bash" and b.mark == ""]))
def test_shell_blocks_run(block, tmp_path):
    _run_bash(block, tmp_path, timeout=600)


@pytest.mark.parametrize("block", _param(
    [b for b in ALL if b.language == "bash" and b.mark in ("slow", "server")], [pytest.mark.slow]))
def test_slow_shell_blocks_run(block, tmp_path):
    _run_bash(block, tmp_path, timeout=1800)


@pytest.mark.parametrize("block", _param(
    [b for b in ALL if b.language == "bash" and b.mark == "llm"], [pytest.mark.llm]))
def test_llm_shell_blocks_run(block, tmp_path):
    _run_bash(block, tmp_path, timeout=3600)


def test_no_file_refers_to_a_file_outside_the_repository():
    outside = re.compile(r"(\.\./shared|shared/methods|methods/[a-z]+\.md|(?<![\w/])DESIGN\.md)")
    bad = []
    for path in ROOT.rglob("*"):
        if (not path.is_file() or any(p in path.parts for p in (".git", ".venv", "site", "build"))
                or path.suffix not in {".py", ".md", ".yml", ".yaml", ".toml", ".txt", ".j2"}
                or path == Path(__file__) or "fixtures" in path.parts):
            continue
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if outside.search(line):
                bad.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()[:100]}")
    assert not bad, "references to files outside the repository:\n" + "\n".join(bad[:30])


@pytest.mark.slow
def test_the_site_builds_strictly(tmp_path):
    done = subprocess.run([str(ROOT / ".venv" / "bin" / "mkdocs"), "build", "--strict",
                           "--site-dir", str(tmp_path / "site")], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
