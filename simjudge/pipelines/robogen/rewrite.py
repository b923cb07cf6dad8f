"""Find the object, link and joint names in RoboGen substep code, and rename them.

References are found with :mod:`ast`: the arguments of state API and primitive calls
(``get_joint_state(self, "Oven", "joint_1")``), and any other string literal that names
an object or a part (``grasped_link == "link_2".lower()``), attributed to the object
named in the same statement, else to the task's only articulated object. Renaming
replaces exactly those literals in the source text, so comments and layout stay as
RoboGen wrote them.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

__all__ = ["NameRef", "PART_RE", "find_refs", "rename"]

PART_RE = re.compile(r"^(link|joint)_(\d+)$")
"""A PartNet-Mobility link or joint name (``link_3``, ``joint_0``)."""

_OBJECT_ARG1 = frozenset(
    {
        "grasp_object", "grasp_object_link", "approach_object", "approach_object_link",
        "get_position", "get_orientation", "get_link_state", "get_joint_state",
        "get_joint_limit", "get_bounding_box", "get_bounding_box_link", "check_grasped",
        "get_initial_joint_angle", "get_initial_pos_orient", "gripper_close_to_object",
        "gripper_close_to_object_link", "get_velocity", "get_link_pc",
    }
)  # fmt: skip
_PART_ARG2 = {
    "grasp_object_link": "link",
    "approach_object_link": "link",
    "get_link_state": "link",
    "get_bounding_box_link": "link",
    "check_grasped": "link",
    "gripper_close_to_object_link": "link",
    "get_link_pc": "link",
    "get_joint_state": "joint",
    "get_joint_limit": "joint",
    "get_initial_joint_angle": "joint",
}


@dataclass(frozen=True)
class NameRef:
    """One name literal in a substep's code.

    Attributes:
        line: 1-based line in the code.
        col: Byte offset of the literal's first quote in that line (UTF-8, as ``ast``).
        end_col: Byte offset just past its closing quote.
        value: The literal's text.
        kind: ``object``, ``link`` or ``joint``.
        obj: The object it belongs to (the object itself for ``object``), or None when
            it cannot be told.
        call: The function whose argument it is ('' for a free literal).
        target: Names the call's result is assigned to (``knob_pos``), for evidence.
    """

    line: int
    col: int
    end_col: int
    value: str
    kind: str
    obj: str | None
    call: str = ""
    target: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Literal:
    node: ast.Constant
    text: str


def _literal(node: ast.AST) -> _Literal | None:
    """A string constant, also inside ``"Name".lower()``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return _Literal(node, node.value)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("lower", "upper", "strip")
        and not node.args
    ):
        return _literal(node.func.value)
    return None


def _targets(stmt: ast.stmt) -> tuple[str, ...]:
    names: list[str] = []
    targets: list[ast.expr] = []
    if isinstance(stmt, ast.Assign):
        targets = list(stmt.targets)
    elif isinstance(stmt, ast.AugAssign | ast.AnnAssign):
        targets = [stmt.target]
    for target in targets:
        for node in ast.walk(target):
            if isinstance(node, ast.Name):
                names.append(node.id)
    return tuple(names)


def _statements(tree: ast.Module) -> Iterable[ast.stmt]:
    """Simple statements (not compound ones), in source order."""
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and not isinstance(
            node, ast.FunctionDef | ast.If | ast.For | ast.While | ast.With
        ):
            yield node
        elif isinstance(node, ast.If | ast.While):
            yield ast.Expr(value=node.test, lineno=node.lineno, col_offset=node.col_offset)


def find_refs(code: str, objects: Mapping[str, str], articulated: Iterable[str]) -> list[NameRef]:
    """Every object, link and joint name literal in ``code``.

    Args:
        code: A converted substep (primitive block or reward function).
        objects: Lower-cased object name -> the scene's name for it.
        articulated: Scene names of the articulated objects (the fallback owner of a
            part name when a statement names no object).

    Returns:
        The references, in source order.
    """
    only = list(dict.fromkeys(articulated))
    collector = _Collector(objects, only[0] if len(only) == 1 else None)
    for stmt in _statements(ast.parse(code)):
        collector.statement(stmt)
    return sorted(collector.refs.values(), key=lambda r: (r.line, r.col))


class _Collector:
    """Gathers the references of one piece of code, statement by statement."""

    def __init__(self, objects: Mapping[str, str], fallback: str | None) -> None:
        self.objects = objects
        self.fallback = fallback
        self.refs: dict[tuple[int, int], NameRef] = {}

    def add(self, lit: _Literal, kind: str, obj: str | None, call: str, target) -> None:
        const = lit.node
        key = (const.lineno, const.col_offset)
        if key in self.refs or const.end_col_offset is None or const.end_lineno != const.lineno:
            return
        self.refs[key] = NameRef(
            const.lineno, const.col_offset, const.end_col_offset, lit.text, kind, obj,
            call, target,
        )  # fmt: skip

    def statement(self, stmt: ast.stmt) -> None:
        target = _targets(stmt)
        named = {
            self.objects[lit.text.lower()]
            for node in ast.walk(stmt)
            if (lit := _literal(node)) is not None and lit.text.lower() in self.objects
        }
        context = next(iter(named)) if len(named) == 1 else self.fallback
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                self.call(node, node.func.id, context, target)
        for node in ast.walk(stmt):  # literals outside calls: "link_2".lower() == ...
            lit = _literal(node)
            if lit is None:
                continue
            lowered = lit.text.lower()
            if lowered in self.objects:
                self.add(lit, "object", self.objects[lowered], "", target)
            elif match := PART_RE.match(lowered):
                self.add(lit, match.group(1), context, "", target)

    def call(self, node: ast.Call, name: str, context: str | None, target) -> None:
        if name not in _OBJECT_ARG1 or len(node.args) < 2:
            return
        obj_lit = _literal(node.args[1])
        obj = None
        if obj_lit is not None:
            obj = self.objects.get(obj_lit.text.lower())
            self.add(obj_lit, "object", obj, name, target)
        if name in _PART_ARG2 and len(node.args) >= 3:
            part = _literal(node.args[2])
            if part is not None:
                self.add(part, _PART_ARG2[name], obj or context, name, target)


def rename(code: str, replacements: Mapping[tuple[int, int], str]) -> str:
    """Replace literals: ``(line, col)`` of a reference -> its new text (without quotes).

    The new text is written with the literal's own quote character.
    """
    lines = code.split("\n")
    by_line: dict[int, list[tuple[int, str]]] = {}
    for (line, col), text in replacements.items():
        by_line.setdefault(line, []).append((col, text))
    for line, edits in by_line.items():
        raw = lines[line - 1].encode("utf-8")
        for col, text in sorted(edits, reverse=True):
            quote = raw[col : col + 1]
            end = raw.index(quote, col + 1) + 1
            raw = raw[:col] + quote + text.encode("utf-8") + quote + raw[end:]
        lines[line - 1] = raw.decode("utf-8")
    return "\n".join(lines)
