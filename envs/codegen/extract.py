"""Pull code out of an LLM answer without damaging its indentation.

RoboGen strips every line of generated code, which flattens function bodies and
breaks any reward with an ``if`` or a loop. Here fenced blocks are taken as they
are, and only their common leading indentation is removed (``textwrap.dedent``).
"""

from __future__ import annotations

import re
import textwrap

__all__ = ["extract_code", "extract_code_blocks"]

_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*([\w+-]*)[^\n]*$", re.MULTILINE)
_PYTHON_TAGS = frozenset({"", "python", "python3", "py", "py3"})


def extract_code_blocks(text: str) -> list[str]:
    """Return every fenced Python (or untagged) code block in ``text``, dedented.

    An unterminated final fence (a truncated answer) runs to the end of the text.
    Blocks tagged with another language (``yaml``, ``json``, ...) are skipped.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    blocks: list[str] = []
    pos = 0
    while True:
        opening = _FENCE.search(text, pos)
        if opening is None:
            break
        fence, tag = opening.group(1), opening.group(2).lower()
        start = opening.end() + 1
        closing = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", re.MULTILINE)
        end_match = closing.search(text, start)
        end = end_match.start() if end_match else len(text)
        if tag in _PYTHON_TAGS:
            blocks.append(_clean(text[start:end]))
        pos = end_match.end() if end_match else len(text)
    return [b for b in blocks if b.strip()]


def extract_code(text: str) -> str:
    """Return the code in an LLM answer: its Python blocks joined, or the whole text.

    Several fenced blocks (e.g. a helper and the reward function) are joined with a
    blank line in order. Without fences the text is taken as code. Indentation inside
    the code is kept; only the common leading indentation is removed.
    """
    blocks = extract_code_blocks(text)
    if blocks:
        return "\n\n".join(b.rstrip("\n") for b in blocks) + "\n"
    return _clean(text.replace("\r\n", "\n").replace("\r", "\n"))


def _clean(code: str) -> str:
    lines = [line.rstrip() for line in textwrap.dedent(code).split("\n")]
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(lines) + "\n" if lines else ""
