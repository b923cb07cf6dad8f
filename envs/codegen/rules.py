"""The AST visitor behind :func:`~simjudge.envs.codegen.checker.check_source`.

It checks nodes against an allowlist of syntax, resolves every name and call
against the namespace that generated code will actually see, validates attributes
and records the user-function call graph so that recursion can be rejected.
"""

from __future__ import annotations

import ast

from . import policy
from .errors import CodeResourceError, DisallowedCodeError, GeneratedCodeError, Issue
from .syntax import (
    ALLOWED_NODES,
    FORMAT_SPEC_RE,
    NODE_MESSAGES,
    SELF_MESSAGE,
    bound_names,
    const_int,
    find_cycles,
    is_np_linalg,
    literal_length,
)

__all__ = ["MAX_ISSUES", "NodeRules"]

MAX_ISSUES = 50
"""Issues reported per source; beyond it the check stops collecting (linear time)."""
_MAX_SUGGESTIONS = 20
"""Closest-name suggestions computed per source (each costs a difflib search)."""
_SUBSCRIPT_TARGET_MESSAGE = (
    "assign items one at a time (`a[i] = v` on its own line); items and slices cannot be "
    "targets of unpacking, `for` loops, comprehensions or chained assignments"
)

class NodeRules(ast.NodeVisitor):
    """Collects :class:`Issue` objects for one parsed module (use :meth:`run`)."""

    def __init__(
        self,
        tree: ast.Module,
        *,
        api_names: frozenset[str],
        primitive_names: frozenset[str],
        allow_primitives: bool,
        max_alloc_elements: int,
        max_int_bits: int,
    ) -> None:
        self.tree = tree
        self.api_names = api_names
        self.primitive_names = primitive_names
        self.allow_primitives = allow_primitives
        self.max_alloc = max_alloc_elements
        self.max_int_bits = max_int_bits
        self.issues: list[Issue] = []
        self.functions = {s.name: s for s in tree.body if isinstance(s, ast.FunctionDef)}
        self.edges: dict[str, set[str]] = {name: set() for name in self.functions}
        self.sites: dict[str, dict[str, int]] = {name: {} for name in self.functions}
        self.sites["<module>"] = {}
        self.constant_calls: list[tuple[str, tuple[object, ...]]] = []
        self._suggestions = 0
        self.called_functions: set[str] = set()
        self.api_used: set[str] = set()
        self.primitives_used: set[str] = set()
        module_stmts = [s for s in tree.body if not isinstance(s, ast.FunctionDef)]
        self.module_bound = bound_names(module_stmts) | set(self.functions)
        self.fn: str | None = None
        self.local: set[str] = set()

    # -- driver -----------------------------------------------------------------------

    def run(self) -> None:
        """Visit the whole module, then report recursion cycles."""
        self.visit(self.tree)
        self._report_cycles()

    def add(
        self,
        node: ast.AST | None,
        code: str,
        message: str,
        error_type: type[GeneratedCodeError] = DisallowedCodeError,
    ) -> None:
        """Record one error at ``node``'s position (at most :data:`MAX_ISSUES`)."""
        if len(self.issues) >= MAX_ISSUES:
            return
        line = getattr(node, "lineno", None)
        col = getattr(node, "col_offset", None)
        self.issues.append(Issue(line, col, code, message, error_type=error_type))

    def generic_visit(self, node: ast.AST) -> None:
        """Reject any node type outside the allowlist, otherwise descend."""
        if not isinstance(node, ALLOWED_NODES):
            message = NODE_MESSAGES.get(
                type(node), f"`{type(node).__name__}` syntax is not allowed in generated code"
            )
            self.add(node, "disallowed-syntax", message)
            return
        super().generic_visit(node)

    # -- definitions ------------------------------------------------------------------

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        """Allow top-level, undecorated functions; check names and defaults."""
        if self.fn is not None:
            self.add(
                node,
                "nested-function",
                f"nested function '{node.name}' is not allowed; define helpers at the top level",
            )
            return
        if node.decorator_list:
            self.add(node, "decorator", "decorators are not allowed")
        self._check_binding_name(node, node.name, "function name")
        args = node.args
        params = [*args.posonlyargs, *args.args, *args.kwonlyargs]
        params += [a for a in (args.vararg, args.kwarg) if a is not None]
        for param in params:
            if param.arg != "self":
                self._check_binding_name(param, param.arg, "parameter name")
        for default in [*args.defaults, *(d for d in args.kw_defaults if d is not None)]:
            self.visit(default)
        self.fn = node.name
        self.local = {p.arg for p in params} | bound_names(node.body)
        for stmt in node.body:
            self.visit(stmt)
        self.fn, self.local = None, set()

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        """Annotations are stripped before execution, so only target and value count."""
        self.visit(node.target)
        if node.value is not None:
            self.visit(node.value)

    def visit_Return(self, node: ast.Return) -> None:
        """``return`` only inside functions."""
        if self.fn is None:
            self.add(
                node,
                "return-outside-function",
                "`return` outside a function: a primitive block is plain statements that "
                "assign `success` (RoboGen's `execute` method ends with `return rgbs, "
                "final_state, success`; drop that line and keep `success = ...`, or "
                "convert the RoboGen folder with `simjudge import-robogen`)",
            )
        self.generic_visit(node)

    def visit_comprehension(self, node: ast.comprehension) -> None:
        """No async comprehensions, no item targets."""
        if node.is_async:
            self.add(node.target, "disallowed-syntax", "async comprehensions are not allowed")
        self._refuse_item_targets(node.target)
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        """Item stores only as the single target of a plain assignment."""
        if len(node.targets) > 1 or not isinstance(node.targets[0], ast.Subscript):
            for target in node.targets:
                self._refuse_item_targets(target)
        self.generic_visit(node)

    def visit_For(self, node: ast.For) -> None:
        """No item targets in ``for`` loops."""
        self._refuse_item_targets(node.target)
        self.generic_visit(node)

    def _refuse_item_targets(self, target: ast.expr) -> None:
        for sub in ast.walk(target):
            if isinstance(sub, ast.Subscript):
                self.add(sub, "item-target", _SUBSCRIPT_TARGET_MESSAGE)
                return

    # -- names ------------------------------------------------------------------------

    def visit_Name(self, node: ast.Name) -> None:
        """Resolve loads against the namespace; guard stores to reserved names."""
        if isinstance(node.ctx, ast.Load):
            self._check_load(node)
        else:
            self._check_binding_name(node, node.id, "variable")

    def _check_binding_name(self, node: ast.AST, name: str, what: str) -> None:
        if name.startswith("__"):
            self.add(
                node, "reserved-name", f"{what} '{name}': names starting with '__' are reserved"
            )
        elif name in policy.RESERVED_NAMES:
            self.add(node, "reserved-name", f"cannot rebind '{name}': it is pre-bound")
        elif name in self.api_names or name in self.primitive_names:
            self.add(
                node,
                "reserved-name",
                f"cannot rebind '{name}': it is a state API or primitive function; "
                "choose another name",
            )
        elif what == "function name" and name in policy.SAFE_BUILTIN_NAMES:
            self.add(node, "reserved-name", f"function '{name}' would shadow a builtin; rename it")
        elif self.fn is None and what == "variable" and name in self.functions:
            self.add(
                node, "reserved-name", f"cannot rebind '{name}': it is a function defined above"
            )

    def _check_load(self, node: ast.Name) -> None:
        name = node.id
        if name.startswith("__"):
            self.add(node, "reserved-name", f"'{name}': names starting with '__' are not allowed")
        elif self.fn is not None and name in self.local:
            return
        elif name in self.functions:
            self.add(
                node,
                "function-as-value",
                f"function '{name}' can only be called, e.g. {name}(...); "
                "it cannot be used as a value",
            )
        elif name in self.module_bound or name in self._namespace_names():
            return
        else:
            self._unknown(node, name, call=False)

    def _namespace_names(self) -> frozenset[str]:
        names = set(policy.SAFE_BUILTIN_NAMES) | self.api_names | policy.RESERVED_NAMES
        if self.allow_primitives:
            names |= self.primitive_names
        return frozenset(names)

    def _unknown(self, node: ast.AST, name: str, *, call: bool) -> None:
        if len(self.issues) >= MAX_ISSUES:
            return  # the report is full: skip the message (and its name search)
        if name in policy.FORBIDDEN_NAMES:
            what = f"call to '{name}'" if call else f"'{name}'"
            self.add(node, "disallowed-name", f"{what} is not allowed; {self._allowed_calls()}")
        elif name in self.primitive_names:
            self.add(
                node,
                "primitive-not-allowed",
                f"primitive '{name}' is only allowed in primitive blocks; reward and success "
                "code must only read the state (get_position, get_joint_state, ...)",
            )
        elif name in policy.STATE_API_NAMES:
            self.add(
                node,
                "api-not-available",
                f"'{name}' is not available here; available state API functions: "
                f"{', '.join(sorted(self.api_names)) or 'none'}",
            )
        elif name in policy.MODULE_NAMES:
            self.add(
                node,
                "disallowed-name",
                f"module '{name}' is not available: generated code can only use `np` "
                "(numpy), `math` and the state API",
            )
        elif name in policy.ROBOGEN_HINTS:
            what = f"call to '{name}'" if call else f"name '{name}'"
            self.add(
                node,
                "unknown-name",
                f"{what}: RoboGen's '{name}' is not part of simjudge's state API; "
                f"use {policy.ROBOGEN_HINTS[name]}",
            )
        else:
            hint = None
            if self._suggestions < _MAX_SUGGESTIONS:
                hint = self._closest(name, self._namespace_names() | self.module_bound | self.local)
            tip = f"; did you mean '{hint}'?" if hint else ""
            if call:
                msg = f"call to unknown function '{name}'{tip} {self._allowed_calls()}"
            else:
                msg = f"name '{name}' is not defined{tip}"
            self.add(node, "unknown-name", msg)

    def _closest(self, name: str, pool: frozenset[str] | set[str]) -> str | None:
        self._suggestions += 1
        if self._suggestions > _MAX_SUGGESTIONS or len(name) > 64:
            return None
        if len(pool) > 300:  # keep the search cheap: the namespace and a few locals
            pool = self._namespace_names() | set(sorted(pool)[:100])
        return self._closest_in(name, pool)

    def _closest_in(self, name: str, pool: frozenset[str] | set[str]) -> str | None:
        """The closest known name; a query-like name is pointed to the state API.

        ``get_grasped_thing`` or ``is_grasped`` read the state, so suggesting a motion
        primitive (``grasp_object``) would be wrong: prefer a state API name, and
        ``check_grasped`` for anything about grasping.
        """
        hint = policy.closest(name, pool)
        lowered = name.lower()
        query = lowered.startswith(("get_", "check_", "is_", "has_", "gripper_"))
        if (query or hint is None) and (hint is None or hint in self.primitive_names):
            api_hint = policy.closest(name, self.api_names)
            if api_hint is None and "grasp" in lowered and "check_grasped" in self.api_names:
                api_hint = "check_grasped"
            hint = api_hint or hint
        return hint

    def _allowed_calls(self) -> str:
        api = ", ".join(sorted(self.api_names)) or "none"
        prims = ""
        if self.allow_primitives:
            prims = f"the primitives ({', '.join(sorted(self.primitive_names))}), "
        builtins = ", ".join(policy.SAFE_BUILTIN_NAMES)
        return (
            f"generated code may only call the state API ({api}), {prims}numpy (np.*) and "
            f"math (math.*) functions, its own top-level functions and the builtins {builtins}"
        )

    # -- calls and attributes -----------------------------------------------------------

    def visit_Call(self, node: ast.Call) -> None:
        """Calls must target a known name, an allowlisted np/math function or method."""
        func = node.func
        if isinstance(func, ast.Name):
            self._check_call_name(func)
            if func.id in self.api_names and not node.keywords:
                self._record_constant_call(func.id, node.args)
        elif isinstance(func, ast.Attribute):
            self._check_attribute(func, call=True)
        else:
            self.add(
                node,
                "disallowed-call",
                "only named functions and methods can be called "
                "(e.g. np.sqrt(x), get_position(self, name))",
            )
            self.visit(func)
        for arg in node.args:
            self.visit(arg)
        for kw in node.keywords:
            if kw.arg is None:
                self.add(kw.value, "disallowed-syntax", "`**` unpacking in calls is not allowed")
            self.visit(kw.value)

    def _record_constant_call(self, name: str, args: list[ast.expr]) -> None:
        values: list[object] = []
        for arg in args:
            if isinstance(arg, ast.Name) and arg.id == "self":
                values.append(None)
            elif isinstance(arg, ast.Constant) and isinstance(arg.value, str | int | float):
                if isinstance(arg.value, str) and len(arg.value) > 256:
                    return
                values.append(arg.value)
            else:
                return
        if values and values[0] is None and len(self.constant_calls) < 256:
            key = (name, tuple(values))
            if key not in self.constant_calls:
                self.constant_calls.append(key)

    def _check_call_name(self, func: ast.Name) -> None:
        name = func.id
        if name.startswith("__"):
            self.add(func, "reserved-name", f"call to '{name}' is not allowed")
        elif self.fn is not None and name in self.local:
            self.add(
                func,
                "disallowed-call",
                f"cannot call '{name}': it is a variable; {self._allowed_calls()}",
            )
        elif name in self.functions:
            self.called_functions.add(name)
            if self.fn is not None:
                self.edges[self.fn].add(name)
            caller = self.sites[self.fn or "<module>"]
            caller[name] = caller.get(name, 0) + 1
        elif name in self.module_bound:
            self.add(func, "disallowed-call", f"cannot call '{name}': it is a variable")
        elif name in self.api_names:
            self.api_used.add(name)
        elif name in self.primitive_names and self.allow_primitives:
            self.primitives_used.add(name)
        elif name not in policy.SAFE_BUILTIN_NAMES:
            self._unknown(func, name, call=True)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        """Attribute reads that are not calls."""
        self._check_attribute(node, call=False)

    def _check_attribute(self, node: ast.Attribute, *, call: bool) -> None:
        base, attr = node.value, node.attr
        if isinstance(base, ast.Name) and base.id == "self":
            self.add(node, "self-attribute", SELF_MESSAGE.format(what=f"self.{attr}"))
            return
        if not isinstance(node.ctx, ast.Load):
            self.add(
                node, "attribute-store", "assigning to attributes is not allowed; use a variable"
            )
        if attr.startswith("_"):
            self.add(
                node,
                "private-attribute",
                f"attribute '{attr}' is not allowed: names starting with '_' are private",
            )
        elif isinstance(base, ast.Name) and base.id in ("np", "math"):
            self._check_module_attribute(node, base.id, call=call)
            return
        elif is_np_linalg(base):
            self._check_namespace(node, "np.linalg", policy.NUMPY_LINALG_NAMES)
            return
        elif call and attr not in policy.METHOD_NAMES:
            fix = "; use an f-string instead" if attr in ("format", "format_map") else ""
            hint = policy.closest(attr, policy.METHOD_NAMES)
            tip = f" (did you mean '.{hint}()'?)" if hint and not fix else ""
            self.add(
                node,
                "disallowed-method",
                f"method '.{attr}()' is not allowed{fix}{tip}; allowed methods: "
                f"{', '.join(sorted(policy.METHOD_NAMES))}",
            )
        elif not call and attr not in policy.DATA_ATTRIBUTE_NAMES:
            fix = (
                f"call it: .{attr}(...)"
                if attr in policy.METHOD_NAMES
                else "use a state API function"
            )
            self.add(
                node,
                "disallowed-attribute",
                f"attribute '.{attr}' is not allowed; readable attributes are "
                f"{', '.join(sorted(policy.DATA_ATTRIBUTE_NAMES))} ({fix})",
            )
        self.visit(base)

    def _check_module_attribute(self, node: ast.Attribute, module: str, *, call: bool) -> None:
        names = policy.NUMPY_NAMES if module == "np" else policy.MATH_NAMES
        if (
            self._check_namespace(node, module, names)
            and call
            and node.attr in ("ndarray", "linalg")
        ):
            self.add(
                node,
                "disallowed-call",
                f"{module}.{node.attr}(...) cannot be called; use np.array(...) or np.zeros(shape)",
            )

    def _check_namespace(self, node: ast.Attribute, label: str, names: frozenset[str]) -> bool:
        if node.attr in names:
            return True
        hint = policy.closest(node.attr, names)
        tip = f"did you mean {label}.{hint}? " if hint else ""
        self.add(
            node,
            "disallowed-attribute",
            f"{label}.{node.attr} is not allowed; {tip}allowed: {', '.join(sorted(names))}",
        )
        return False

    def visit_Subscript(self, node: ast.Subscript) -> None:
        """No indexing into ``self``."""
        if isinstance(node.value, ast.Name) and node.value.id == "self":
            self.add(node, "self-attribute", SELF_MESSAGE.format(what="self[...]"))
            self.visit(node.slice)
            return
        self.generic_visit(node)

    # -- operators and formatting -------------------------------------------------------

    def visit_BinOp(self, node: ast.BinOp) -> None:
        """Reject %-formatting and constant expressions that are obviously too large."""
        if isinstance(node.op, ast.Mod) and isinstance(node.left, ast.JoinedStr | ast.Constant):
            if isinstance(node.left, ast.JoinedStr) or isinstance(node.left.value, str | bytes):
                self.add(node, "disallowed-syntax", "%-formatting is not allowed; use an f-string")
        self._check_constant_size(node)
        self.generic_visit(node)

    def _check_constant_size(self, node: ast.BinOp) -> None:
        if isinstance(node.op, ast.Pow | ast.LShift):
            left, right = const_int(node.left), const_int(node.right)
            shift = isinstance(node.op, ast.LShift)
            if (
                left is not None
                and right is not None
                and right > 0
                and abs(left) > (0 if shift else 1)
            ):
                bits = right if shift else left.bit_length() * right
                if bits > self.max_int_bits:
                    self.add(
                        node,
                        "too-large",
                        f"this constant has about {bits} bits; integers are limited to "
                        f"{self.max_int_bits} bits",
                        CodeResourceError,
                    )
        elif isinstance(node.op, ast.Mult):
            for seq, count in ((node.left, node.right), (node.right, node.left)):
                length, n = literal_length(seq), const_int(count)
                if length is not None and n is not None and length * n > self.max_alloc:
                    self.add(
                        node,
                        "too-large",
                        f"this repetition creates {length * n} elements; the limit is "
                        f"{self.max_alloc}",
                        CodeResourceError,
                    )

    def visit_FormattedValue(self, node: ast.FormattedValue) -> None:
        """Only short constant format specs (e.g. ``:.3f``), no nested fields."""
        self.visit(node.value)
        spec = node.format_spec
        if spec is None:
            return
        parts = spec.values if isinstance(spec, ast.JoinedStr) else [spec]
        text = "".join(str(p.value) for p in parts if isinstance(p, ast.Constant))
        if not all(isinstance(p, ast.Constant) for p in parts) or not FORMAT_SPEC_RE.match(text):
            self.add(
                node,
                "format-spec",
                "this f-string format spec is not allowed; use simple ones such as "
                "{x:.3f} or {x:8.2f}",
            )

    # -- recursion ----------------------------------------------------------------------

    def _report_cycles(self) -> None:
        for path in find_cycles(self.edges):
            start = path[0]
            chain = " -> ".join([*path, start])
            self.add(
                self.functions[start],
                "recursion",
                f"recursion is not allowed: '{start}' calls itself ({chain}); "
                "rewrite it with a loop",
            )
