"""The size and complexity budget of generated source, checked before deep analysis.

Every check here runs in time linear in the source and without recursion, so a hostile
source cannot make the checker itself slow, deeply recursive or crash:

1. :func:`precheck_source` scans the raw text (length, lines, bracket nesting outside
   strings and comments) *before* ``ast.parse``;
2. :func:`tree_budget` walks the parsed tree iteratively (node count, nesting depth,
   f-string fields) *before* any recursive visitor, ``compile`` or the guard rewrite.

The limits are documented constants (module attributes, so callers and the README can
cite them). Sources over budget get a :class:`~simjudge.envs.codegen.errors.Issue` whose
message names the limit and the fix.
"""

from __future__ import annotations

import ast

from .errors import CodeResourceError, CodeSyntaxError, Issue

__all__ = [
    "MAX_AST_NODES",
    "MAX_BRACKET_DEPTH",
    "MAX_FSTRING_FIELDS",
    "MAX_LINES",
    "MAX_NESTING",
    "MAX_SOURCE_CHARS",
    "precheck_source",
    "tree_budget",
]

MAX_SOURCE_CHARS = 50_000
"""Longest accepted source (characters)."""
MAX_LINES = 2_000
"""Most lines in one source."""
MAX_BRACKET_DEPTH = 40
"""Deepest nesting of ``( [ {`` outside strings, checked before parsing."""
MAX_AST_NODES = 20_000
"""Most syntax-tree nodes (a 500-line reward has about 5,000)."""
MAX_NESTING = 80
"""Deepest nesting of the syntax tree (statements and expressions, e.g. a chain
``a + b + c + ...`` of N terms nests N levels)."""
MAX_FSTRING_FIELDS = 16
"""Most ``{...}`` fields in one f-string (each field is size-checked on its own)."""


def _issue(code: str, message: str, error_type: type = CodeResourceError) -> Issue:
    return Issue(None, None, code, message, error_type=error_type)


def precheck_source(source: str) -> Issue | None:
    """Reject sources over the text budget before parsing; None if within it."""
    if len(source) > MAX_SOURCE_CHARS:
        return _issue(
            "too-long",
            f"the code is {len(source)} characters long; the limit is {MAX_SOURCE_CHARS}",
            CodeSyntaxError,
        )
    lines = source.count("\n") + 1
    if lines > MAX_LINES:
        return _issue(
            "too-long", f"the code has {lines} lines; the limit is {MAX_LINES}", CodeSyntaxError
        )
    depth = _bracket_depth(source)
    if depth > MAX_BRACKET_DEPTH:
        return _issue(
            "too-deep",
            f"brackets are nested {depth} levels deep; the limit is {MAX_BRACKET_DEPTH}: "
            "assign inner parts to variables",
        )
    return None


def _bracket_depth(source: str) -> int:
    """Deepest bracket nesting outside string literals and comments (one linear scan)."""
    depth = deepest = 0
    i, n = 0, len(source)
    while i < n:
        ch = source[i]
        if ch == "#":
            end = source.find("\n", i)
            i = n if end < 0 else end
            continue
        if ch in "'\"":
            i = _skip_string(source, i)
            continue
        if ch in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in ")]}":
            depth = max(depth - 1, 0)
        i += 1
    return deepest


def _skip_string(source: str, i: int) -> int:
    """Index just past the string literal starting at ``i`` (or the end of the text)."""
    quote = source[i] * 3 if source.startswith(source[i] * 3, i) else source[i]
    j = i + len(quote)
    n = len(source)
    while j < n:
        ch = source[j]
        if ch == "\\":
            j += 2
            continue
        if source.startswith(quote, j):
            return j + len(quote)
        if ch == "\n" and len(quote) == 1:
            return j  # unterminated: the parser reports it
        j += 1
    return n


def tree_budget(tree: ast.AST) -> Issue | None:
    """Reject trees over the node, nesting or f-string budget; None if within it.

    Iterative (an explicit stack), so it is safe on any tree ``ast.parse`` returns.
    """
    count = 0
    stack: list[tuple[ast.AST, int]] = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        count += 1
        if count > MAX_AST_NODES:
            return _issue(
                "too-complex",
                f"the code has more than {MAX_AST_NODES} syntax nodes; write a shorter "
                "reward (loops instead of repeated statements)",
            )
        if depth > MAX_NESTING:
            line = getattr(node, "lineno", None)
            return Issue(
                line,
                None,
                "too-deep",
                f"the code is nested more than {MAX_NESTING} levels deep (e.g. a very long "
                "`a + b + ...` chain or deeply nested calls); split it into several "
                "statements with intermediate variables",
                error_type=CodeResourceError,
            )
        if isinstance(node, ast.JoinedStr):
            fields = sum(isinstance(v, ast.FormattedValue) for v in node.values)
            if fields > MAX_FSTRING_FIELDS:
                return Issue(
                    getattr(node, "lineno", None),
                    None,
                    "too-large",
                    f"this f-string has {fields} fields; the limit is {MAX_FSTRING_FIELDS}: "
                    "print in several parts",
                    error_type=CodeResourceError,
                )
        for child in ast.iter_child_nodes(node):
            stack.append((child, depth + 1))
    return None
