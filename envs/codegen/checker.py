"""Static analysis of generated code: parse, walk the AST, report every violation.

The check is an allowlist: any syntax node, name, attribute or call not listed in
:mod:`simjudge.envs.codegen.policy` is an :class:`~simjudge.envs.codegen.errors.Issue`.
All issues are collected (not only the first) with line numbers, so that the same
pass serves compilation (raise on the first error, carrying the others) and a rule
judge (count and report every mistake). The scope model is deliberately simple: a
name bound anywhere in a function (or at module level) counts as bound there.

Beyond the allowlist, the check enforces the shape of each kind of code (see
:func:`check_source`) and rejects recursion: user functions may be called only by
name, so the call graph is exact and any cycle in it is reported.
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from typing import Literal

from . import policy
from .budget import MAX_SOURCE_CHARS, precheck_source, tree_budget
from .errors import (
    CodeResourceError,
    CodeSyntaxError,
    DisallowedCodeError,
    GeneratedCodeError,
    InvalidOutputError,
    Issue,
    MissingOutputError,
)
from .rules import NodeRules
from .syntax import KINDS, Kind

__all__ = [
    "MAX_CALL_FANOUT",
    "MAX_SOURCE_CHARS",
    "Analysis",
    "analyze",
    "call_fanout",
    "check_source",
    "issues_to_error",
]

Mode = Literal["function", "block"]
MAX_CALL_FANOUT = 100_000
"""Largest static bound on generated-function calls per run (see :func:`call_fanout`)."""
REWARD_ENTRY_NAMES = ("_compute_reward", "compute_reward")
# fmt: off
SUCCESS_ENTRY_NAMES = (
    "_compute_success", "compute_success", "_check_success", "check_success",
    "is_success", "success",
)
# fmt: on


@dataclass
class Analysis:
    """Result of :func:`analyze`; the compiler reads everything it needs from here.

    Attributes:
        tree: The parsed module (None if it did not parse).
        issues: All findings, errors and warnings, sorted by line.
        functions: Top-level function definitions by name.
        entry: Name of the function to call (function mode), else None.
        mode: ``"function"`` (call ``entry``) or ``"block"`` (run the statements).
        outputs: Names assigned by top-level statements, in order of first assignment.
        api_used: State API names the code calls.
        primitives_used: Primitive names the code calls.
        fanout: Static upper bound on the calls of generated functions one run makes
            when no loop repeats them (calls inside loops are counted by the tracer).
        constant_calls: State API calls whose arguments are all ``self`` or constants,
            as ``(name, args)`` with ``self`` as None (prefetched for subprocess mode).
    """

    tree: ast.Module | None
    issues: list[Issue] = field(default_factory=list)
    functions: dict[str, ast.FunctionDef] = field(default_factory=dict)
    entry: str | None = None
    mode: Mode = "function"
    outputs: tuple[str, ...] = ()
    api_used: frozenset[str] = frozenset()
    primitives_used: frozenset[str] = frozenset()
    fanout: int = 0
    constant_calls: tuple[tuple[str, tuple[object, ...]], ...] = ()

    @property
    def errors(self) -> list[Issue]:
        """The issues that block compilation."""
        return [i for i in self.issues if i.severity == "error"]

    def raise_first(self) -> None:
        """Raise the most important error (carrying all errors), if there is any.

        Syntax errors come first, then disallowed constructs, then size limits, then
        output-shape problems (which are often consequences of the others).
        """
        error = issues_to_error(self.issues)
        if error is not None:
            raise error


def check_source(
    source: str,
    kind: Kind = "reward",
    api_names: Iterable[str] = policy.STATE_API_NAMES,
    allow_primitives: bool | None = None,
    *,
    primitive_names: Iterable[str] = policy.PRIMITIVE_NAMES,
) -> list[Issue]:
    """Statically check generated code and report every violation.

    Kinds and the shapes they accept:

    - ``"reward"``: a module with ``def _compute_reward(self): ... return reward,
      success`` (or ``compute_reward``, or a single top-level function that no other
      function calls); helper functions and constants may sit beside it.
    - ``"success"``: a function returning a bool (``_compute_success``,
      ``check_success``, ... or a single uncalled function), or statements that
      assign ``success``.
    - ``"primitive"``: statements such as ``rgbs, final_state =
      grasp_object_link(self, "Obj", "link_0")`` then ``success =
      check_grasped(self, "Obj", "link_0")``; ``success`` must be assigned.

    Args:
        source: The code (already extracted from the LLM answer, see ``extract_code``).
        kind: One of ``"reward"``, ``"success"``, ``"primitive"``.
        api_names: State API functions the code may call.
        allow_primitives: Whether primitive calls are allowed; defaults to True only
            for ``"primitive"`` blocks.
        primitive_names: The primitive names known to the caller.

    Returns:
        Every issue (errors and warnings), sorted by line. Empty means the code
        compiles.
    """
    return analyze(
        source, kind, api_names, allow_primitives, primitive_names=primitive_names
    ).issues


def analyze(
    source: str,
    kind: Kind = "reward",
    api_names: Iterable[str] = policy.STATE_API_NAMES,
    allow_primitives: bool | None = None,
    *,
    primitive_names: Iterable[str] = policy.PRIMITIVE_NAMES,
    max_alloc_elements: int = 1_000_000,
    max_int_bits: int = 10_000,
    max_calls: int = MAX_CALL_FANOUT,
) -> Analysis:
    """Run the static check and resolve the entry point; see :func:`check_source`.

    Linear in the size of the source: the text and the tree are checked against the
    budget of :mod:`~simjudge.envs.codegen.budget` before any recursive pass, and any
    failure of the passes themselves becomes a typed issue (never a raw exception).
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if allow_primitives is None:
        allow_primitives = kind == "primitive"
    tree, issue = _parse(source)
    if tree is None:
        return Analysis(tree=None, issues=[issue] if issue else [])
    try:
        return _analyze_tree(
            tree, kind, api_names, allow_primitives, primitive_names, max_alloc_elements,
            max_int_bits, max_calls,
        )
    except (RecursionError, MemoryError, ValueError, TypeError) as exc:
        msg = f"the code cannot be checked ({type(exc).__name__}); simplify it"
        return Analysis(tree=None, issues=[Issue(None, None, "too-complex", msg,
                                                 error_type=CodeResourceError)])


def _analyze_tree(
    tree: ast.Module,
    kind: Kind,
    api_names: Iterable[str],
    allow_primitives: bool,
    primitive_names: Iterable[str],
    max_alloc_elements: int,
    max_int_bits: int,
    max_calls: int,
) -> Analysis:
    rules = NodeRules(
        tree,
        api_names=frozenset(api_names),
        primitive_names=frozenset(primitive_names),
        allow_primitives=allow_primitives,
        max_alloc_elements=max_alloc_elements,
        max_int_bits=max_int_bits,
    )
    rules.run()
    analysis = Analysis(
        tree=tree,
        issues=list(rules.issues),
        functions=dict(rules.functions),
        outputs=_top_level_outputs(tree),
        api_used=frozenset(rules.api_used),
        primitives_used=frozenset(rules.primitives_used),
    )
    _resolve_shape(analysis, kind, rules.called_functions)
    analysis.constant_calls = tuple(rules.constant_calls)
    if not analysis.errors:
        analysis.fanout = call_fanout(rules.sites, analysis.entry)
        if analysis.fanout > max_calls:
            analysis.issues.append(
                Issue(None, None, "too-many-calls",
                      f"the functions call each other so that one run can make up to "
                      f"{analysis.fanout:.3g} calls; the limit is {max_calls}: call helpers "
                      "once and reuse their results", error_type=CodeResourceError)
            )
    if not analysis.errors:
        _compile_check(tree, analysis)
    analysis.issues.sort(key=lambda i: (i.line is None, i.line or 0, i.col or 0))
    return analysis


def call_fanout(sites: dict[str, dict[str, int]], entry: str | None) -> int:
    """Upper bound on generated-function calls in one run, from the static call graph.

    ``sites[f][g]`` is the number of call sites of ``g`` in ``f`` (``"<module>"`` for
    top-level statements). The graph is acyclic (recursion is rejected), so ``calls(f) =
    1 + sum(sites[f][g] * calls(g))`` is finite; it is computed bottom-up without
    recursion and capped at 10**18. A call site inside a loop counts once: loops are
    traced, and the tracer counts every call against ``ExecutionLimits.max_calls``.
    """
    cap = 10**18
    memo: dict[str, int] = {}
    for root in sites:
        stack = [(root, False)]
        while stack:
            name, expanded = stack.pop()
            if name in memo:
                continue
            callees = sites.get(name, {})
            if not expanded:
                stack.append((name, True))
                stack.extend((g, False) for g in callees if g not in memo and g in sites)
                continue
            total = 1
            for g, n in callees.items():
                total = min(cap, total + n * memo.get(g, 1))
            memo[name] = total
    run = memo.get("<module>", 1) - 1
    if entry is not None:
        run += memo.get(entry, 1)
    return min(run, cap)


def _parse(source: str) -> tuple[ast.Module | None, Issue | None]:
    if not isinstance(source, str):
        raise TypeError(f"source must be a str, got {type(source).__name__}")
    over = precheck_source(source)
    if over is not None:
        return None, over
    try:
        tree = ast.parse(source, filename="<generated>")
    except SyntaxError as exc:
        msg = f"invalid syntax: {exc.msg}; fix the code so that it parses as Python 3"
        return None, Issue(exc.lineno, exc.offset, "syntax", msg, error_type=CodeSyntaxError)
    except (RecursionError, MemoryError, ValueError) as exc:
        msg = f"the code cannot be parsed ({type(exc).__name__}); reduce nesting depth"
        return None, Issue(None, None, "syntax", msg, error_type=CodeSyntaxError)
    over = tree_budget(tree)
    if over is not None:
        return None, over
    try:
        return tree, None
    except SyntaxError as exc:
        msg = f"invalid syntax: {exc.msg}; fix the code so that it parses as Python 3"
        return None, Issue(exc.lineno, exc.offset, "syntax", msg, error_type=CodeSyntaxError)
    except (RecursionError, MemoryError, ValueError) as exc:
        msg = f"the code cannot be parsed ({type(exc).__name__}); reduce nesting depth"
        return None, Issue(None, None, "syntax", msg, error_type=CodeSyntaxError)


def _compile_check(tree: ast.Module, analysis: Analysis) -> None:
    """Let CPython's compiler find what ``ast.parse`` accepts (e.g. stray ``break``)."""
    try:
        compile(tree, "<generated>", "exec", dont_inherit=True)
    except SyntaxError as exc:
        msg = f"invalid syntax: {exc.msg}"
        analysis.issues.append(
            Issue(exc.lineno, exc.offset, "syntax", msg, error_type=CodeSyntaxError)
        )
    except (RecursionError, MemoryError, ValueError) as exc:
        msg = f"the code cannot be compiled ({type(exc).__name__}); simplify it"
        analysis.issues.append(Issue(None, None, "syntax", msg, error_type=CodeSyntaxError))


def _top_level_outputs(tree: ast.Module) -> tuple[str, ...]:
    names: dict[str, None] = {}

    def walk(node: ast.AST) -> None:
        if isinstance(node, ast.FunctionDef | ast.Lambda | ast.ClassDef | ast.comprehension):
            return
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.setdefault(node.id, None)
        for child in ast.iter_child_nodes(node):
            walk(child)

    for stmt in tree.body:
        walk(stmt)
    return tuple(names)


def _missing(analysis: Analysis, code: str, message: str, line: int | None = None) -> None:
    analysis.issues.append(Issue(line, None, code, message, error_type=MissingOutputError))


def _resolve_shape(analysis: Analysis, kind: Kind, called: Collection[str]) -> None:
    assert analysis.tree is not None, "shapes are resolved only for code that parsed"
    has_statements = any(not isinstance(s, ast.FunctionDef) for s in analysis.tree.body)
    if kind == "primitive" or (
        kind == "success" and ("success" in analysis.outputs or not analysis.functions)
    ):
        analysis.mode = "block"
        if "success" not in analysis.outputs:
            _missing(
                analysis,
                "missing-success",
                "the block never assigns `success`; end it with e.g. "
                '`success = check_grasped(self, "Obj", "link_0")`',
            )
        if kind == "primitive":
            _primitive_block_warnings(analysis)
        return
    preferred = REWARD_ENTRY_NAMES if kind == "reward" else SUCCESS_ENTRY_NAMES
    entry = next((n for n in preferred if n in analysis.functions), None)
    if entry is None:
        uncalled = [n for n in analysis.functions if n not in called]
        if len(uncalled) == 1:
            entry = uncalled[0]
    if entry is None:
        example = (
            "`def _compute_reward(self): ... return reward, success`"
            if kind == "reward"
            else "`def check_success(self): ... return success`"
        )
        found = ", ".join(analysis.functions) or "none"
        detail = " (top-level statements alone are not enough)" if has_statements else ""
        _missing(
            analysis,
            "missing-entry",
            f"cannot find the {kind} function{detail}; define {example} "
            f"(top-level functions found: {found})",
        )
        return
    analysis.entry = entry
    _check_entry(analysis, analysis.functions[entry], kind)


def _check_entry(analysis: Analysis, fn: ast.FunctionDef, kind: Kind) -> None:
    args = fn.args
    positional = args.posonlyargs + args.args
    required = len(positional) - len(args.defaults)
    if required > 1 or any(d is None for d in args.kw_defaults):
        analysis.issues.append(
            Issue(
                fn.lineno,
                fn.col_offset,
                "signature",
                f"'{fn.name}' must take a single argument `self` (the state view); "
                f"write `def {fn.name}(self):`",
            )
        )
    returns = [n for n in ast.walk(fn) if isinstance(n, ast.Return)]
    usage = "return reward, success" if kind == "reward" else "return success"
    if not any(r.value is not None for r in returns):
        _missing(
            analysis,
            "missing-return",
            f"'{fn.name}' never returns a value; end it with `{usage}`",
            fn.lineno,
        )
    for ret in returns:
        if ret.value is None:
            _missing(analysis, "missing-return", f"bare `return`; write `{usage}`", ret.lineno)
        elif kind == "reward" and isinstance(ret.value, ast.Tuple) and len(ret.value.elts) != 2:
            analysis.issues.append(
                Issue(
                    ret.lineno,
                    ret.col_offset,
                    "reward-arity",
                    f"the reward function returns {len(ret.value.elts)} values; "
                    "it must return exactly two: `return reward, success`",
                    error_type=InvalidOutputError,
                )
            )


def _primitive_block_warnings(analysis: Analysis) -> None:
    if not analysis.primitives_used:
        analysis.issues.append(
            Issue(
                None,
                None,
                "no-primitive",
                "the primitive block calls no primitive (e.g. grasp_object_link)",
                severity="warning",
            )
        )
    assert analysis.tree is not None, "warnings are looked for only in code that parsed"
    for stmt in analysis.tree.body:
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Name)
            and call.func.id in analysis.primitives_used
        ):
            analysis.issues.append(
                Issue(
                    stmt.lineno,
                    stmt.col_offset,
                    "unassigned-primitive",
                    f"assign the result of {call.func.id}: "
                    f"`rgbs, final_state = {call.func.id}(...)`",
                    severity="warning",
                )
            )


_PRIORITY: dict[type[GeneratedCodeError], int] = {
    CodeSyntaxError: 0,
    DisallowedCodeError: 1,
    CodeResourceError: 2,
}


def issues_to_error(issues: Iterable[Issue]) -> GeneratedCodeError | None:
    """Return the typed error for the most important error in ``issues``, or None."""
    errors = tuple(i for i in issues if i.severity == "error")
    if not errors:
        return None
    primary = min(errors, key=lambda i: (_PRIORITY.get(i.error_type, 3), i.line or 0))
    return primary.to_error(errors)
