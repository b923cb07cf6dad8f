"""Constant state-API calls, resolved once per view into reads of the per-step reading.

Why: ``get_joint_state(self, "Drawer", "joint_0")`` names the same object and joint on every
call, so looking the names up, asking the backend and copying its arrays each time is
wasted work next to a physics step. The env already reads every body's state once per step
in one batched backend call (:meth:`~simjudge.envs.scene_builder.BuiltScene.state_queries`,
memoised by the backend per state, shared with the observation); a constant call can be
answered from that reading at a fixed index.

Two stages:

1. **Compile time** (:func:`rewrite_constant_calls`): in the entry function of loop-free code
   (the only function whose ``self`` is surely the state token), each call of a resolvable
   state-API function whose arguments are ``self`` followed by constant strings becomes a
   call of a slot ``__sj_c<k>()`` with no arguments. Nothing is rewritten when the code
   rebinds ``self`` or the function's name anywhere, when the API maps the name to another
   function than :data:`~simjudge.envs.state_api.STATE_API`'s, or for calls inside nested
   functions and lambdas.
2. **Bind time** (:func:`bind_calls`, once per view): each slot becomes a reader of the
   reading (joint values, base poses, the suction point, AABBs), a constant (joint limits)
   or, when the names do not resolve or the view is not a live
   :class:`~simjudge.envs.state_api.StateView`, the unresolved call itself (the state-API
   wrapper with the same arguments), so errors are raised as before, with the same message.

A resolved call returns what the unresolved one returns (same types, same values, fresh
arrays): the reading holds the numbers the single getters return (the backends' conformance
tests compare them), and ``tests/envs/codegen_fast`` compares both on recorded rollouts.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from itertools import repeat
from typing import Any

import numpy as np

from ..backends.base import body_reading_offsets, read_bodies_via_getters
from ..state_api import (
    GRIPPER_CLOSE_DISTANCE,
    STATE_API,
    StateView,
    _distance_to_box,
    _euler_from_quaternion,
)
from .bindings import MAX_API_TEXT
from .errors import CodeRuntimeError, GeneratedCodeError

__all__ = ["RESOLVABLE", "ConstantCall", "bind_calls", "rewrite_constant_calls"]

Reader = Callable[[], Any]
SLOT_PREFIX = "__sj_c"


@dataclass(frozen=True)
class ConstantCall:
    """One distinct constant state-API call of the code.

    Attributes:
        name: The state-API function.
        args: Its constant arguments after ``self``.
        slot: The namespace name the call now goes through (``__sj_c<k>``).
    """

    name: str
    args: tuple[str, ...]
    slot: str


# -- compile time ---------------------------------------------------------------------------


def _bound_names(tree: ast.AST) -> set[str]:
    """Every name the code binds anywhere (assignments, parameters, definitions, imports)."""
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.alias):
            bound.add(node.asname or node.name)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            bound.update(node.names)
        elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            bound.add(node.rest)
    return bound


def _self_is_token(tree: ast.Module, entry: ast.FunctionDef) -> bool:
    """Whether ``self`` inside ``entry`` is always the state token.

    The entry is called with the token as its only positional argument (when it takes
    any) and the module namespace binds ``self`` to the token; so ``self`` is the token
    unless the code rebinds it or ``entry`` has a parameter ``self`` other than its first.
    """
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == "self" and not isinstance(node.ctx, ast.Load):
            return False
        if isinstance(node, ast.Global | ast.Nonlocal) and "self" in node.names:
            return False
    args = entry.args
    positional = [a.arg for a in (*args.posonlyargs, *args.args)]
    others = [a.arg for a in args.kwonlyargs]
    others += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
    if "self" in others:
        return False
    return "self" not in positional or positional[0] == "self"


class _Rewriter(ast.NodeTransformer):
    """Replaces resolvable constant calls by slot calls (not inside nested scopes)."""

    def __init__(self, names: set[str]) -> None:
        self.names = names
        self.calls: dict[tuple[str, tuple[str, ...]], ConstantCall] = {}

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        return node  # a nested function's `self` may be anything

    def visit_Lambda(self, node: ast.Lambda) -> ast.AST:
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        func = node.func
        if not isinstance(func, ast.Name) or func.id not in self.names or node.keywords:
            return node
        if not node.args:
            return node
        first, *rest = node.args
        if not (isinstance(first, ast.Name) and first.id == "self"):
            return node
        texts: list[str] = []
        for a in rest:
            if not (isinstance(a, ast.Constant) and type(a.value) is str):
                return node
            texts.append(a.value)
        args = tuple(texts)
        if any(len(a) > MAX_API_TEXT for a in args):
            return node
        if len(args) not in _ARITY[func.id]:
            return node
        key = (func.id, args)
        call = self.calls.get(key)
        if call is None:
            call = self.calls[key] = ConstantCall(func.id, args, f"{SLOT_PREFIX}{len(self.calls)}")
        slot = ast.Call(func=ast.Name(id=call.slot, ctx=ast.Load()), args=[], keywords=[])
        return ast.copy_location(slot, node)


def rewrite_constant_calls(
    tree: ast.Module, entry: str, api: Mapping[str, Callable[..., Any]]
) -> tuple[ast.Module, tuple[ConstantCall, ...]]:
    """Rewrite the resolvable constant calls of ``entry`` into slot calls (see the module doc).

    Returns:
        A rewritten copy of ``tree`` and its calls, or ``tree`` itself and ``()`` when no
        call can be resolved.
    """
    found = [s for s in tree.body if isinstance(s, ast.FunctionDef) and s.name == entry]
    if len(found) != 1 or not _self_is_token(tree, found[0]):
        return tree, ()
    bound = _bound_names(tree)
    names = {
        name for name in RESOLVABLE
        if name in api and api[name] is STATE_API[name] and name not in bound
    }
    if not names:
        return tree, ()
    tree = copy.deepcopy(tree)
    function = next(s for s in tree.body if isinstance(s, ast.FunctionDef) and s.name == entry)
    rewriter = _Rewriter(names)
    function.body = [rewriter.visit(stmt) for stmt in function.body]
    if not rewriter.calls:
        return tree, ()
    return ast.fix_missing_locations(tree), tuple(rewriter.calls.values())


# -- bind time ------------------------------------------------------------------------------


class _Reading:
    """A view's batched per-step reading and where each body's numbers sit in it."""

    def __init__(self, view: StateView) -> None:
        scene = view.reading_source()
        self.view = view
        self.scene = scene
        self.robot = scene.robot
        backend = scene.robot.backend
        self.queries = scene.state_queries()
        starts = scene.state_query_starts()
        reader = getattr(backend, "read_bodies", None)
        self.read = reader if reader is not None else partial(read_bodies_via_getters, backend)
        self.values: Callable[[Any], list[float]] | None = getattr(backend, "read_values", None)
        """The reading as a list of floats (memoised by the backend), where the backend has one."""
        self.parts: dict[int, tuple[Any, dict[str, int]]] = {}
        for query, start in zip(self.queries, starts, strict=True):
            at = {key: start + value for key, value in body_reading_offsets(query).items()}
            self.parts.setdefault(query.body, (query, at))

    def object(self, name: str) -> Any:
        """The scene object named ``name`` (raises for unknown names, as the view does)."""
        return self.scene.objects[self.view.canonical_name(name)]

    def part(self, body: int) -> tuple[Any, dict[str, int]]:
        """The query of ``body`` and the offsets of its quantities in the reading."""
        return self.parts[body]


def _joint_state(r: _Reading, obj_name: str, joint: str) -> Reader:
    obj = r.object(obj_name)
    query, at = r.part(obj.body)
    k = at["joints"] + query.joints.index(obj.joint_index[joint])
    read, values, queries = r.read, r.values, r.queries
    if values is not None:  # the reading's list: one index, no numpy call (cold after physics)

        def joint_value() -> float:
            try:
                return values(queries)[k]
            except (GeneratedCodeError, MemoryError):
                raise
            except Exception as exc:
                raise _failed("get_joint_state", exc) from exc

        return joint_value

    def joint_state() -> float:
        try:
            return read(queries).item(k)  # a float64 reading: item() gives the Python float
        except (GeneratedCodeError, MemoryError):
            raise
        except Exception as exc:
            raise _failed("get_joint_state", exc) from exc

    return joint_state


def _joint_limit(r: _Reading, obj_name: str, joint: str) -> Reader:
    value = STATE_API["get_joint_limit"](r.view, obj_name, joint)
    if type(value) is not tuple or not all(type(v) is float for v in value):
        raise TypeError("joint limits are a tuple of floats")
    return repeat(value).__next__  # the same tuple on every call, without a Python frame


def _base_at(r: _Reading, obj_name: str) -> int:
    query, at = r.part(r.object(obj_name).body)
    if not query.base:
        raise KeyError("the reading has no base pose of this object")
    return at["base"]


def _position(r: _Reading, obj_name: str) -> Reader:
    a = _base_at(r, obj_name)
    read, queries = r.read, r.queries

    def position() -> np.ndarray:
        try:
            return read(queries)[a : a + 3].copy()
        except (GeneratedCodeError, MemoryError):
            raise
        except Exception as exc:
            raise _failed("get_position", exc) from exc

    return position


def _orientation(r: _Reading, obj_name: str) -> Reader:
    a = _base_at(r, obj_name) + 3
    read, queries = r.read, r.queries
    return lambda: _euler_from_quaternion(read(queries)[a : a + 4])


def _eef_pos(r: _Reading) -> Reader:
    robot, view = r.robot, r.view
    link = robot.ee_link
    query, at = r.part(robot.body)
    if tuple(query.links) != (link,):
        raise KeyError("the reading's robot part is not the suction point alone")
    p, o = at["link_positions"], at["link_orientations"]
    read, queries = r.read, r.queries

    def eef() -> tuple[np.ndarray, np.ndarray]:
        try:
            if robot.ee_link != link:  # the robot changed its suction link: ask the view
                pos, orn = view.eef_pose()
                return pos, orn
            reading = read(queries)
            return reading[p : p + 3].copy(), reading[o : o + 4].copy()
        except (GeneratedCodeError, MemoryError):
            raise
        except Exception as exc:
            raise _failed("get_eef_pos", exc) from exc

    return eef


def _box_at(r: _Reading, obj_name: str, link: str | None) -> int:
    obj = r.object(obj_name)
    query, at = r.part(obj.body)
    if link is None:
        if not query.aabb:
            raise KeyError("the reading has no AABB of this object")
        return at["aabb"]
    return at["link_aabbs"] + 6 * query.link_aabbs.index(obj.link_index[link])


def _bounding_box(r: _Reading, obj_name: str, link: str | None = None) -> Reader:
    if link is None and r.view.is_table_top(obj_name):  # the table top: a constant box
        lo, hi = r.view.aabb(obj_name)
        return lambda: (lo.copy(), hi.copy())
    a = _box_at(r, obj_name, link)
    read, queries = r.read, r.queries

    def box() -> tuple[np.ndarray, np.ndarray]:
        reading = read(queries)
        return reading[a : a + 3].copy(), reading[a + 3 : a + 6].copy()

    return box


def _link_state(r: _Reading, obj_name: str, link: str) -> Reader:
    a = _box_at(r, obj_name, link)
    read, queries = r.read, r.queries

    def centre() -> np.ndarray:
        reading = read(queries)
        result: np.ndarray = (reading[a : a + 3] + reading[a + 3 : a + 6]) / 2.0
        return result

    return centre


def _check_grasped(r: _Reading, obj_name: str, link: str | None = None) -> Reader:
    STATE_API["check_grasped"](r.view, obj_name, *(() if link is None else (link,)))
    name = r.view.canonical_name(obj_name)
    held: dict[tuple[int, int], tuple[str, str]] = {}
    for obj in r.scene.objects.values():  # the first match, as StateView.grasped() finds it
        for link_name, index in obj.link_index.items():
            held.setdefault((obj.body, index), (obj.name, link_name))
    robot = r.robot

    def grasped() -> bool:
        att = robot.attachment
        if att is None:
            return False
        found = held.get((att.body, att.link))
        return found is not None and found[0] == name and (link is None or found[1] == link)

    return grasped


def _close_to_link(r: _Reading, obj_name: str, link: str) -> Reader:
    box, eef = _bounding_box(r, obj_name, link), _eef_pos(r)
    def close() -> bool:
        lo, hi = box()
        return _distance_to_box(eef()[0], lo, hi) < GRIPPER_CLOSE_DISTANCE

    return close


def _failed(name: str, exc: Exception) -> CodeRuntimeError:
    """The error the state-API wrapper raises when ``name`` fails with ``exc``."""
    return CodeRuntimeError(f"{name}() failed: {type(exc).__name__}: {exc}")


def _named(name: str, reader: Reader) -> Reader:
    """``reader`` failing as the state-API wrapper fails: ``CodeRuntimeError`` naming ``name``."""

    def call() -> Any:
        try:
            return reader()
        except (GeneratedCodeError, MemoryError):
            raise
        except Exception as exc:
            raise _failed(name, exc) from exc

    return call


_RESOLVERS: dict[str, Callable[..., Reader]] = {
    "get_eef_pos": _eef_pos,
    "get_joint_state": _joint_state,
    "get_joint_limit": _joint_limit,
    "get_position": _position,
    "get_orientation": _orientation,
    "get_bounding_box": _bounding_box,
    "get_bounding_box_link": _bounding_box,
    "get_link_state": _link_state,
    "check_grasped": _check_grasped,
    "gripper_close_to_object_link": _close_to_link,
}
_ARITY: dict[str, tuple[int, ...]] = {
    "get_eef_pos": (0,),
    "get_joint_state": (2,),
    "get_joint_limit": (2,),
    "get_position": (1,),
    "get_orientation": (1,),
    "get_bounding_box": (1,),
    "get_bounding_box_link": (2,),
    "get_link_state": (2,),
    "check_grasped": (1, 2),
    "gripper_close_to_object_link": (2,),
}
_CONSTANT = frozenset({"get_joint_limit"})
"""Resolved to constants: nothing can fail when they are read."""
_SELF_NAMED = frozenset({"get_joint_state", "get_position", "get_eef_pos"})
"""Readers that name themselves in their errors (the common ones: one frame less)."""
RESOLVABLE: frozenset[str] = frozenset(_ARITY)
"""State-API functions whose constant calls are resolved."""


def bind_calls(
    view: object, calls: tuple[ConstantCall, ...], fallback: Mapping[str, Reader]
) -> dict[str, Reader]:
    """Slot name -> reader for ``view``: resolved where the names resolve, else ``fallback``.

    Args:
        view: The caller's view; anything but a live :class:`StateView` gets ``fallback``.
        calls: The code's constant calls (from :func:`rewrite_constant_calls`).
        fallback: Slot name -> the unresolved call (the state-API wrapper, same arguments).
    """
    if type(view) is not StateView or not calls:
        return dict(fallback)
    try:
        reading = _Reading(view)
    except Exception:  # noqa: BLE001 - a scene without a batched reading: calls as written
        return dict(fallback)
    bound: dict[str, Reader] = {}
    for call in calls:
        try:
            reader = _RESOLVERS[call.name](reading, *call.args)
        except Exception:  # noqa: BLE001 - unknown names etc.: the call raises them as written
            bound[call.slot] = fallback[call.slot]
            continue
        plain = call.name in _CONSTANT or call.name in _SELF_NAMED
        bound[call.slot] = reader if plain else _named(call.name, reader)
    return bound
