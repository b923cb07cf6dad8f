"""The allowlists that define what generated code may use.

Everything here is data, so that the static checker, the runtime guards and the
documentation agree on one list. The guiding rule: generated code reads the
simulation only through the state API, computes with numbers, arrays, numpy and
math, and returns values. Anything that could reach the interpreter, the file
system, the simulator object or unbounded memory is left out.

Method and attribute allowlists are per kind of receiver (``array``, ``list``,
...). The static check uses their union (it cannot know types); the runtime guard
checks the receiver's actual kind, so ``gen.gi_frame`` or ``view.env`` fail even
when the name happens to be allowed on some other type. Allowed methods, by kind:

- array (``np.ndarray``): all, any, argmax, argmin, astype (numeric dtypes only),
  clip, copy, cumsum, dot, flatten, item, max, mean, min, prod, ravel, reshape,
  round, squeeze, std, sum, tolist, transpose, var
- scalar (numpy scalar): item, tolist, round, astype
- number (int/float/bool): is_integer, bit_length, conjugate
- list: append, clear, copy, count, extend, index, insert, pop, remove, reverse, sort
- tuple: count, index
- dict: copy, get, items, keys, pop, setdefault, update, values
- str: endswith, lower, lstrip, rstrip, split, startswith, strip, upper

Methods left out on purpose: ``str.format``/``format_map`` (attribute access through
format fields), ``str.join``/``str.replace`` and ``ndarray.repeat`` (unbounded
output from bounded input), ``ndarray.tofile``/``dump`` (files).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = [
    "ATTRIBUTES_BY_KIND",
    "DATA_ATTRIBUTE_NAMES",
    "FORBIDDEN_NAMES",
    "MATH_NAMES",
    "METHODS_BY_KIND",
    "METHOD_NAMES",
    "MODULE_NAMES",
    "NUMPY_LINALG_NAMES",
    "NUMPY_NAMES",
    "PRIMITIVE_NAMES",
    "RESERVED_NAMES",
    "ROBOGEN_HINTS",
    "SAFE_BUILTIN_NAMES",
    "STATE_API_NAMES",
    "closest",
]

STATE_API_NAMES: tuple[str, ...] = (
    "get_eef_pos",
    "get_position",
    "get_orientation",
    "get_link_state",
    "get_joint_state",
    "get_joint_limit",
    "get_bounding_box",
    "get_bounding_box_link",
    "in_bbox",
    "check_grasped",
    "get_initial_joint_angle",
    "get_initial_pos_orient",
    "get_grasped_object_name",
    "get_grasped_object_and_link_name",
    "gripper_close_to_object_link",
    "gripper_close_to_object",
)
"""State query functions (RoboGen/VERGSA names); each is called as ``f(self, ...)``."""

ROBOGEN_HINTS: dict[str, str] = {
    "grasped": "check_grasped(self, object_name) or get_grasped_object_name(self)",
    "is_grasped": "check_grasped(self, object_name, link_name)",
    "get_grasped_object": "get_grasped_object_name(self) (lower-cased, or None)",
    "get_grasped_link_name": "get_grasped_object_and_link_name(self)",
    "get_link_pc": "get_bounding_box_link(self, object_name, link_name) (simjudge reads "
    "bounding boxes; RoboGen rendered a point cloud)",
    "get_link_pos": "get_link_state(self, object_name, link_name)",
    "compute_obj_to_center_dist": "np.linalg.norm(get_position(self, a) - (lo + hi) / 2) "
    "with lo, hi = get_bounding_box(self, b)",
    "get_finger_pos": "get_eef_pos(self)[0] (the suction point; the gripper has no fingers)",
    "get_finger_distance": "check_grasped(self, object_name) (the gripper is a suction cup)",
    "set_joint_value": "nothing: generated code only reads the state; set initial joint "
    "values in the scene's joint_init",
}
"""RoboGen helper names that simjudge does not provide -> what to call instead."""

PRIMITIVE_NAMES: tuple[str, ...] = (
    "grasp_object",
    "grasp_object_link",
    "release_grasp",
    "approach_object",
    "approach_object_link",
    "move_to_pose",
)
"""Motion primitives; allowed only in primitive blocks, bound by the executor."""

# fmt: off
SAFE_BUILTIN_NAMES: tuple[str, ...] = (
    "abs", "all", "any", "bool", "dict", "divmod", "enumerate", "float", "int",
    "isinstance", "len", "list", "max", "min", "pow", "print", "range", "reversed",
    "round", "set", "sorted", "str", "sum", "tuple", "zip",
)
# fmt: on
"""Builtins available by name (``range``, ``sum``, ``pow``, ``round``, ``str``, ``print``
and ``isinstance`` are guarded versions)."""

# fmt: off
FORBIDDEN_NAMES: frozenset[str] = frozenset(
    {
        "__import__", "breakpoint", "bytearray", "bytes", "callable", "classmethod",
        "compile", "delattr", "dir", "eval", "exec", "exit", "format", "getattr",
        "globals", "hasattr", "help", "id", "input", "iter", "locals", "memoryview",
        "next", "object", "open", "property", "quit", "setattr", "staticmethod",
        "super", "type", "vars",
    }
)
# fmt: on
"""Builtins that reach the interpreter, files or objects' internals."""

# fmt: off
MODULE_NAMES: frozenset[str] = frozenset(
    {
        "builtins", "ctypes", "importlib", "io", "os", "pathlib", "pickle", "shutil",
        "signal", "socket", "subprocess", "sys", "threading", "time",
    }
)
# fmt: on
"""Well-known module names, reported with a dedicated "not available" message."""

RESERVED_NAMES: frozenset[str] = frozenset({"np", "math", "self"})
"""Pre-bound names that generated code may not rebind."""

# fmt: off
NUMPY_NAMES: frozenset[str] = frozenset(
    {
        # constants and types
        "pi", "e", "inf", "nan", "newaxis", "ndarray", "float32", "float64",
        "int32", "int64", "bool_", "linalg",
        # creation (size-checked)
        "array", "asarray", "zeros", "ones", "full", "zeros_like", "ones_like",
        "full_like", "arange", "linspace", "eye", "identity", "copy",
        # elementwise
        "abs", "absolute", "sqrt", "square", "exp", "log", "log10", "log2", "sin",
        "cos", "tan", "arcsin", "arccos", "arctan", "arctan2", "sinh", "cosh", "tanh",
        "deg2rad", "rad2deg", "degrees", "radians", "hypot", "sign", "floor", "ceil",
        "round", "clip", "minimum", "maximum", "add", "subtract", "multiply",
        "divide", "power", "isnan", "isinf", "isfinite", "nan_to_num", "where",
        "logical_and", "logical_or", "logical_not", "logical_xor", "isclose",
        "allclose", "array_equal", "cross",
        # reductions and same-size transforms
        "sum", "mean", "median", "std", "var", "prod", "min", "max", "amin", "amax",
        "argmin", "argmax", "any", "all", "cumsum", "count_nonzero", "diff", "sort",
        "argsort", "interp",
        # products (output size checked)
        "dot", "vdot", "inner", "outer", "matmul",
        # shape (views or bounded copies)
        "concatenate", "stack", "hstack", "vstack", "reshape", "transpose", "squeeze",
        "expand_dims", "ravel", "flip", "tile", "repeat",
    }
)
# fmt: on
"""Names available as ``np.<name>``."""

NUMPY_LINALG_NAMES: frozenset[str] = frozenset({"norm", "det", "inv", "solve"})
"""Names available as ``np.linalg.<name>``."""

# fmt: off
MATH_NAMES: frozenset[str] = frozenset(
    {
        "pi", "e", "tau", "inf", "nan", "sqrt", "exp", "log", "log10", "log2", "cos",
        "sin", "tan", "acos", "asin", "atan", "atan2", "cosh", "sinh", "tanh", "fabs",
        "floor", "ceil", "trunc", "isclose", "isfinite", "isnan", "isinf", "radians",
        "degrees", "hypot", "copysign", "fmod", "dist", "pow",
    }
)
# fmt: on
"""Names available as ``math.<name>`` (no ``factorial``/``prod``/``comb``: huge ints)."""

# fmt: off
METHODS_BY_KIND: dict[str, frozenset[str]] = {
    "array": frozenset(
        {
            "all", "any", "argmax", "argmin", "astype", "clip", "copy", "cumsum", "dot",
            "flatten", "item", "max", "mean", "min", "prod", "ravel", "reshape", "round",
            "squeeze", "std", "sum", "tolist", "transpose", "var",
        }
    ),
    "scalar": frozenset({"item", "tolist", "round", "astype"}),
    "number": frozenset({"is_integer", "bit_length", "conjugate"}),
    "list": frozenset(
        {"append", "clear", "copy", "count", "extend", "index", "insert", "pop", "remove",
         "reverse", "sort"}
    ),
    "tuple": frozenset({"count", "index"}),
    "dict": frozenset({"copy", "get", "items", "keys", "pop", "setdefault", "update", "values"}),
    "str": frozenset(
        {"endswith", "lower", "lstrip", "rstrip", "split", "startswith", "strip", "upper"}
    ),
}
# fmt: on
"""Callable methods per receiver kind (see the module docstring)."""

ATTRIBUTES_BY_KIND: dict[str, frozenset[str]] = {
    "array": frozenset({"shape", "ndim", "size", "T", "real", "imag"}),
    "scalar": frozenset({"shape", "ndim", "size", "real", "imag"}),
    "number": frozenset({"real", "imag"}),
}
"""Readable (non-call) attributes per receiver kind."""

METHOD_NAMES: frozenset[str] = frozenset().union(*METHODS_BY_KIND.values())
DATA_ATTRIBUTE_NAMES: frozenset[str] = frozenset().union(*ATTRIBUTES_BY_KIND.values())


def closest(name: str, candidates: Iterable[str]) -> str | None:
    """Return the candidate most similar to ``name`` (difflib), or None."""
    matches = difflib.get_close_matches(name, sorted(set(candidates)), n=1, cutoff=0.6)
    return matches[0] if matches else None
