"""Read a RoboGen task folder: the scene YAML, the substep lists and the class files.

A RoboGen example task (``example_tasks/<Task>/`` in RoboGen's repository) holds

- the task YAML ``<Task>_<description>.yaml``: a list of entries (``use_table``, one
  entry per object, ``solution_path``, ``set_joint_angle_object_name``,
  ``spatial_relationships``, ``task_name``/``task_description``,
  ``distractor_config_path``), and a ``*_distractor.yaml`` of distractor objects;
- ``task_<Task>/`` with ``substeps.txt`` (one substep name a line),
  ``substep_types.txt`` (``primitive`` or ``reward``), ``action_spaces.txt`` (``None``
  or a translation mode) and one Python class file per substep, named after it.

Each class file is parsed with :mod:`ast`, never imported: a reward substep's
``_compute_reward`` method is taken as is (dedented), a primitive substep's ``execute``
method gives its body as a primitive block, RoboGen's closing
``return rgbs, final_state, success`` dropped (or turned into ``success = ...`` when it
returns an expression).
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from simjudge.envs.errors import SimjudgeError

__all__ = [
    "RobogenImportError",
    "RobogenSubstep",
    "RobogenTask",
    "extract_execute_block",
    "extract_reward_function",
    "find_solution_dir",
    "is_robogen_task_dir",
    "read_task",
]

ACTION_SPACE_NAMES = ("delta-translation", "normalized-direct-translation")


class RobogenImportError(SimjudgeError, ValueError):
    """A RoboGen task folder cannot be converted; the message says why and what to do."""


@dataclass(frozen=True)
class RobogenSubstep:
    """One substep as RoboGen wrote it.

    Attributes:
        name: The substep's name (a line of ``substeps.txt``).
        kind: ``primitive`` or ``reward`` (``substep_types.txt``).
        action_space: The translation mode of a reward substep, None for primitives.
        path: The class file.
        source: The whole class file (its comments are evidence for part names).
        code: The converted code: a primitive block or ``def _compute_reward(self)``.
        notes: What the extraction changed (e.g. the dropped ``return``).
    """

    name: str
    kind: str
    action_space: str | None
    path: Path
    source: str
    code: str
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class RobogenTask:
    """A RoboGen task folder, read.

    Attributes:
        root: The folder that was given.
        config_path: The task YAML.
        entries: The task YAML's entries.
        distractor_path: The distractor YAML, if found.
        distractor_entries: Its entries (empty without one).
        solution_dir: The ``task_<Task>`` folder.
        name: RoboGen's ``task_name``.
        description: RoboGen's ``task_description``.
        substeps: The substeps in order.
    """

    root: Path
    config_path: Path
    entries: tuple[dict[str, Any], ...]
    distractor_path: Path | None
    distractor_entries: tuple[dict[str, Any], ...]
    solution_dir: Path
    name: str
    description: str
    substeps: tuple[RobogenSubstep, ...]


def find_solution_dir(path: str | Path) -> Path | None:
    """The ``task_*`` folder (with ``substeps.txt``) of a RoboGen task folder, or None."""
    root = Path(path)
    if not root.is_dir():
        return None
    if (root / "substeps.txt").is_file():
        return root
    found = sorted(p.parent for p in root.glob("*/substeps.txt"))
    return found[0] if len(found) == 1 else None


def is_robogen_task_dir(path: str | Path) -> bool:
    """Whether ``path`` is a RoboGen task folder (or its ``task_*`` folder)."""
    return find_solution_dir(path) is not None


def read_task(path: str | Path) -> RobogenTask:
    """Read a RoboGen task folder.

    Args:
        path: The example folder (``example_tasks/<Task>``), its ``task_<Task>`` folder,
            or the task YAML.

    Raises:
        RobogenImportError: The folder is not a RoboGen manipulation task, or a file is
            missing or malformed; the message names the file and the fix.
    """
    given = Path(path)
    if not given.exists():
        raise RobogenImportError(f"{given} does not exist; give a RoboGen task folder")
    root = given.parent if given.is_file() else given
    solution_dir = _solution_dir(root, given)
    config_path = _config_path(root, solution_dir, given if given.is_file() else None)
    entries = _load_entries(config_path)
    meta = _merged(entries)
    name = str(meta.get("task_name") or solution_dir.name.removeprefix("task_").replace("_", " "))
    description = str(meta.get("task_description") or name)
    distractor_path = _distractor_path(meta, config_path, solution_dir)
    distractors: tuple[dict[str, Any], ...] = ()
    if distractor_path is not None:
        distractors = _load_entries(distractor_path)
    substeps = _read_substeps(solution_dir)
    return RobogenTask(
        root=root,
        config_path=config_path,
        entries=entries,
        distractor_path=distractor_path,
        distractor_entries=distractors,
        solution_dir=solution_dir,
        name=name,
        description=description,
        substeps=substeps,
    )


# -- locating the files ----------------------------------------------------------------------
def _solution_dir(root: Path, given: Path) -> Path:
    found = find_solution_dir(root)
    if found is not None:
        return found
    candidates = sorted(p.parent for p in root.glob("*/substeps.txt"))
    if len(candidates) > 1:
        names = [p.name for p in candidates]
        raise RobogenImportError(
            f"{root} holds several RoboGen substep folders {names}; give one of them"
        )
    if _is_locomotion(root):
        raise RobogenImportError(
            f"{given} is a RoboGen locomotion task (its code uses RoboGen's `locomotion` "
            "environment); simjudge runs manipulation tasks only"
        )
    raise RobogenImportError(
        f"{given} is not a RoboGen task folder: no substeps.txt in it or in a task_* "
        "subfolder; give the example folder (example_tasks/<Task>) or its task_<Task> folder"
    )


def _is_locomotion(root: Path) -> bool:
    for py in list(root.glob("*.py")) + list(root.glob("*/*.py")) + list(root.glob("*/*/*.py")):
        try:
            head = py.read_text(encoding="utf-8", errors="replace")[:2000]
        except OSError:
            continue
        if re.search(r"^\s*from\s+locomotion\b", head, re.M):
            return True
    return False


def _config_path(root: Path, solution_dir: Path, given: Path | None) -> Path:
    if given is not None and given.suffix in (".yaml", ".yml"):
        return given
    folders = [root] if root != solution_dir else []
    folders += [solution_dir.parent, solution_dir]
    seen: list[Path] = []
    for folder in dict.fromkeys(folders):
        for candidate in sorted(folder.glob("*.yaml")):
            if candidate.name.endswith("_distractor.yaml") or candidate in seen:
                continue
            seen.append(candidate)
    tasks = [p for p in seen if _is_task_yaml(p)]
    if not tasks:
        raise RobogenImportError(
            f"no RoboGen task YAML (a list with task_name and the objects) next to "
            f"{solution_dir}; looked at {[str(p) for p in seen] or 'no .yaml files'}"
        )
    # prefer the YAML whose solution_path names this substep folder
    for candidate in tasks:
        meta = _merged(_load_entries(candidate))
        if Path(str(meta.get("solution_path", ""))).name == solution_dir.name:
            return candidate
    return tasks[0]


def _is_task_yaml(path: Path) -> bool:
    from simjudge.tasks.spec.bounded import read_yaml

    try:
        data = read_yaml(path)
    except (OSError, yaml.YAMLError, UnicodeDecodeError):
        return False  # an over-cap file is reported when it is loaded (_load_entries)
    except ValueError:
        return True
    return isinstance(data, list) and any(
        isinstance(e, dict) and ("task_name" in e or "solution_path" in e) for e in data
    )


def _load_entries(path: Path) -> tuple[dict[str, Any], ...]:
    from simjudge.tasks.spec.bounded import InputLimitError, read_yaml

    try:
        data = read_yaml(path)
    except InputLimitError as exc:
        raise RobogenImportError(str(exc)) from None
    except yaml.YAMLError as exc:
        raise RobogenImportError(f"{path} is not valid YAML: {exc}") from None
    if data is None:
        return ()
    if not isinstance(data, list) or not all(isinstance(e, dict) for e in data):
        raise RobogenImportError(
            f"{path} is not a RoboGen config: expected a YAML list of mappings "
            f"(use_table, objects, spatial_relationships, ...), got {type(data).__name__}"
        )
    return tuple(data)


def _merged(entries: tuple[dict[str, Any], ...]) -> dict[str, Any]:
    """Every non-object entry's keys in one mapping."""
    meta: dict[str, Any] = {}
    for entry in entries:
        if "name" in entry and ("type" in entry or "path" in entry):
            continue
        meta.update(entry)
    return meta


def _distractor_path(meta: dict[str, Any], config: Path, solution_dir: Path) -> Path | None:
    named = meta.get("distractor_config_path")
    if named:
        for folder in (config.parent, solution_dir.parent, solution_dir):
            candidate = folder / Path(str(named)).name
            if candidate.is_file():
                return candidate
    found = sorted(config.parent.glob("*_distractor.yaml"))
    return found[0] if len(found) == 1 else None


# -- substeps --------------------------------------------------------------------------------
def _lines(path: Path) -> list[str]:
    if not path.is_file():
        raise RobogenImportError(f"{path.name} is missing from {path.parent}")
    return [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _read_substeps(folder: Path) -> tuple[RobogenSubstep, ...]:
    names = _lines(folder / "substeps.txt")
    kinds = _lines(folder / "substep_types.txt")
    spaces_path = folder / "action_spaces.txt"
    spaces = _lines(spaces_path) if spaces_path.is_file() else ["None"] * len(names)
    if not names:
        raise RobogenImportError(f"{folder / 'substeps.txt'} lists no substeps")
    if len(kinds) != len(names) or len(spaces) != len(names):
        raise RobogenImportError(
            f"{folder}: substeps.txt has {len(names)} lines, substep_types.txt {len(kinds)} "
            f"and action_spaces.txt {len(spaces)}; they must have one line per substep"
        )
    files = {_key(p.stem): p for p in sorted(folder.glob("*.py"))}
    substeps = []
    for index, (name, kind, space) in enumerate(zip(names, kinds, spaces, strict=True)):
        kind = kind.lower()
        if kind not in ("primitive", "reward"):
            raise RobogenImportError(
                f"{folder / 'substep_types.txt'} line {index + 1}: {kind!r} is neither "
                "'primitive' nor 'reward'"
            )
        path = files.get(_key(name))
        if path is None:
            raise RobogenImportError(
                f"substep {index + 1} {name!r}: no class file {name.replace(' ', '_')}.py in "
                f"{folder} (files: {sorted(p.name for p in files.values())})"
            )
        action_space = None
        if kind == "reward":
            action_space = space if space in ACTION_SPACE_NAMES else "delta-translation"
        substeps.append(_read_substep(name, kind, action_space, path, space))
    return tuple(substeps)


def _key(text: str) -> str:
    """Substep name and file stem compare equal: lower case, letters and digits only."""
    return re.sub(r"[^a-z0-9]", "", text.lower())


def _read_substep(name: str, kind: str, space: str | None, path: Path, raw_space: str):
    source = path.read_text(encoding="utf-8")
    try:
        tree = ast.parse(source, filename=str(path))
    except SyntaxError as exc:
        raise RobogenImportError(
            f"{path.name} line {exc.lineno}: invalid Python ({exc.msg}); fix the file"
        ) from None
    method = "_compute_reward" if kind == "reward" else "execute"
    fn = _find_method(tree, method)
    if fn is None:
        other = _find_method(tree, "execute" if kind == "reward" else "_compute_reward")
        hint = ""
        if other is not None:
            hint = (
                f"; it defines `{other.name}` instead, so substep_types.txt probably says "
                f"{kind!r} where it should say {'primitive' if kind == 'reward' else 'reward'!r}"
            )
        raise RobogenImportError(
            f"substep {name!r} ({path.name}) is a {kind} substep but its class has no "
            f"`{method}` method{hint}"
        )
    notes: list[str] = []
    if kind == "reward":
        code = extract_reward_function(fn, source)
    else:
        code, notes = extract_execute_block(fn, source)
    if kind == "reward" and raw_space not in ACTION_SPACE_NAMES:
        notes.append(
            f"action space {raw_space!r} of a reward substep is not a translation mode; "
            "using delta-translation"
        )
    return RobogenSubstep(name, kind, space, path, source, code, tuple(notes))


def _find_method(tree: ast.Module, name: str) -> ast.FunctionDef | None:
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == name:
                    return item
    for item in tree.body:  # a bare function, as some hand-written tasks have
        if isinstance(item, ast.FunctionDef) and item.name == name:
            return item
    return None


def _segment(source: str, first: ast.stmt, last: ast.stmt) -> str:
    """Source lines from ``first`` to ``last`` (whole lines, comments kept), dedented."""
    lines = source.splitlines()
    start = first.lineno - 1
    # keep comment lines directly above the first statement
    while start > 0 and lines[start - 1].strip().startswith("#"):
        start -= 1
    end = last.end_lineno or last.lineno
    return _tidy("\n".join(lines[start:end]))


def _tidy(text: str) -> str:
    """Dedented, trailing blanks removed (RoboGen's files carry stray spaces)."""
    text = textwrap.dedent(text).strip("\n")
    return "\n".join(line.rstrip() for line in text.split("\n")) + "\n"


def extract_reward_function(fn: ast.FunctionDef, source: str) -> str:
    """``def _compute_reward(self): ...`` as written, dedented (comments kept)."""
    lines = source.splitlines()
    start = (fn.decorator_list[0].lineno if fn.decorator_list else fn.lineno) - 1
    end = fn.end_lineno or fn.lineno
    return _tidy("\n".join(lines[start:end]))


def extract_execute_block(fn: ast.FunctionDef, source: str) -> tuple[str, list[str]]:
    """The body of RoboGen's ``execute`` method as a primitive block.

    RoboGen's blocks end with ``return rgbs, final_state, success``: that ``return`` is
    dropped (``success`` is already assigned); ``return rgbs, final_state, <expr>``
    becomes ``success = <expr>``.

    Raises:
        RobogenImportError: The body has no statements, or returns something else.
    """
    body = [s for s in fn.body if not _is_docstring(s)]
    if not body:
        raise RobogenImportError(f"`{fn.name}` has an empty body")
    notes: list[str] = []
    last = body[-1]
    tail = ""
    if isinstance(last, ast.Return):
        value = last.value
        elts = value.elts if isinstance(value, ast.Tuple) else [value] if value else []
        if not elts:
            raise RobogenImportError(
                f"line {last.lineno}: `execute` ends with a bare `return`; RoboGen's "
                "convention is `return rgbs, final_state, success`"
            )
        result = elts[-1]
        if isinstance(result, ast.Name) and result.id == "success":
            notes.append("dropped RoboGen's closing `return rgbs, final_state, success`")
        else:
            expr = ast.get_source_segment(source, result) or ast.unparse(result)
            tail = f"success = {' '.join(expr.split())}\n"
            notes.append(f"RoboGen's closing `return ..., {expr}` became `success = ...`")
        body = body[:-1]
    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Return):
                raise RobogenImportError(
                    f"line {node.lineno}: `return` before the end of `execute`; a primitive "
                    "block runs top to bottom and ends by assigning `success` (RoboGen's "
                    "convention: a single closing `return rgbs, final_state, success`)"
                )
    code = _segment(source, body[0], body[-1]) if body else ""
    code += tail
    assigned = any(
        isinstance(node, ast.Name) and node.id == "success" and isinstance(node.ctx, ast.Store)
        for stmt in body
        for node in ast.walk(stmt)
    )
    if not assigned and not tail:
        raise RobogenImportError(
            "the `execute` method never assigns `success`; end it with e.g. "
            '`success = check_grasped(self, "Obj", "link_0")` and `return rgbs, final_state, '
            "success`"
        )
    return code, notes


def _is_docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )
