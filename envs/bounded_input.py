"""Bounded reading of YAML and JSON input: size, nesting and YAML alias expansion capped.

Solutions, tasks, configs and RoboGen folders may come from anyone (an LLM, a download), so
a file must not be able to make simjudge hang or run out of memory while it is read:

- size: at most :data:`MAX_YAML_BYTES` of YAML (:data:`MAX_JSON_BYTES` of JSON), checked
  before the text is parsed (and, for files, before it is read);
- nesting: at most :data:`MAX_DEPTH` levels of mappings and lists, checked while the YAML
  is composed (before any deep recursion) and after JSON is decoded;
- YAML aliases: at most :data:`MAX_ALIASES` ``*alias`` uses, and the document as it would be
  once every alias is expanded (which is what validating, copying or dumping it does)
  at most :data:`MAX_YAML_NODES` nodes; a recursive alias is refused. A "billion laughs"
  alias bomb fails in milliseconds with an error naming the cap.

Each violation is an :class:`InputLimitError` that names the file, the cap and how to
fix the file. The YAML loader is PyYAML's safe loader with these checks added. It lives in
the env layer so that scene files are read with the same caps as solutions and tasks
(:mod:`simjudge.tasks.spec.bounded` and :mod:`simjudge.tasks.spec.io` re-export it).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from .errors import SimjudgeError

__all__ = [
    "MAX_ALIASES",
    "MAX_DEPTH",
    "MAX_JSON_BYTES",
    "MAX_YAML_BYTES",
    "MAX_YAML_NODES",
    "InputLimitError",
    "json_depth",
    "load_json_text",
    "load_yaml",
    "read_text_bounded",
    "read_yaml",
]

MAX_JSON_BYTES = 256 * 2**20
"""Largest JSON input (run files simjudge writes: records, summaries, indexes)."""
MAX_DEPTH = 64
"""Deepest nesting of mappings and lists in JSON and YAML input."""


class InputLimitError(SimjudgeError, ValueError):
    """A YAML or JSON input is over a cap (size, nesting, YAML aliases).

    Attributes:
        source: The file (or a description of the text).
        cap: The name of the cap (e.g. ``MAX_YAML_NODES``).
    """

    def __init__(self, source: str, problem: str, cap: str, fix: str) -> None:
        self.source = source
        self.cap = cap
        super().__init__(f"{source}: {problem} (cap {cap}); {fix}")


def json_depth(value: Any) -> int:
    """Nesting depth of decoded JSON (lists and dicts count; iterative)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            deepest = max(deepest, depth)
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            deepest = max(deepest, depth)
            stack.extend((v, depth + 1) for v in item)
    return deepest


def load_json_text(text: str, source: str = "<json>", max_depth: int = MAX_DEPTH) -> Any:
    """Decode JSON within :data:`MAX_JSON_BYTES` and ``max_depth`` levels of nesting.

    Raises:
        InputLimitError: Over a cap; the message names it.
        json.JSONDecodeError: Not valid JSON.
    """
    if len(text) > MAX_JSON_BYTES:
        raise InputLimitError(source, f"is {len(text)} characters long, over "
                              f"{MAX_JSON_BYTES // 2**20} MiB", "MAX_JSON_BYTES",
                              "check that this is the right file")
    try:
        data = json.loads(text)
    except RecursionError:
        raise InputLimitError(source, "nests too deeply to parse", "MAX_DEPTH",
                              "flatten the structure") from None
    if json_depth(data) > max_depth:
        raise InputLimitError(source, f"nests more than {max_depth} levels deep", "MAX_DEPTH",
                              "flatten the structure")
    return data


MAX_YAML_BYTES = 4 * 2**20
"""Largest YAML input (solutions, tasks and configs are a few kB)."""
MAX_ALIASES = 1_000
"""Most ``*alias`` uses in one YAML document."""
MAX_YAML_NODES = 1_000_000
"""Most nodes of a YAML document with every alias expanded."""


class _BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader, counting nesting and aliases while it composes."""

    source = "<yaml>"

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._aliases = 0

    def compose_node(self, parent: Any, index: Any) -> Any:  # noqa: D102 - PyYAML hook
        if self.check_event(yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_ALIASES:
                raise InputLimitError(
                    self.source, f"uses more than {MAX_ALIASES} YAML aliases (*name)",
                    "MAX_ALIASES", "write the values out instead of repeating anchors")
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise InputLimitError(self.source, f"nests more than {MAX_DEPTH} levels deep",
                                  "MAX_DEPTH", "flatten the structure")
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def _expanded_nodes(root: yaml.Node, source: str) -> int:
    """Nodes of the document once every alias is expanded (memoised over shared nodes)."""
    memo: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            open_nodes.discard(key)
            total = 1 + sum(memo[id(c)] for c in _children(node))
            memo[key] = min(total, MAX_YAML_NODES + 1)
            continue
        if key in memo:
            continue
        if key in open_nodes:
            raise InputLimitError(source, "has a recursive YAML alias (a node that contains "
                                  "itself)", "MAX_YAML_NODES", "remove the recursive anchor")
        open_nodes.add(key)
        stack.append((node, True))
        stack.extend((c, False) for c in _children(node) if id(c) not in memo)
    return memo[id(root)]


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def load_yaml(text: str, source: str = "<yaml>") -> Any:
    """Parse one YAML document within the caps (see the module docstring).

    Args:
        text: The YAML text.
        source: What to call it in errors (the file name).

    Raises:
        InputLimitError: Over a cap; the message names it.
        yaml.YAMLError: Not valid YAML.
    """
    if len(text) > MAX_YAML_BYTES:
        raise InputLimitError(source, f"is {len(text)} characters long, over "
                              f"{MAX_YAML_BYTES // 2**20} MiB", "MAX_YAML_BYTES",
                              "solutions, tasks and configs are a few kB: check the file")
    loader = _BoundedLoader(text)
    loader.source = source
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        nodes = _expanded_nodes(node, source)
        if nodes > MAX_YAML_NODES:
            raise InputLimitError(
                source, f"would expand to more than {MAX_YAML_NODES} nodes through YAML "
                "aliases (an alias bomb?)", "MAX_YAML_NODES",
                "write the values out instead of nesting anchors and aliases (&x / *x)")
        return loader.construct_document(node)
    except RecursionError:
        raise InputLimitError(source, "nests too deeply to parse", "MAX_DEPTH",
                              "flatten the structure") from None
    finally:
        loader.dispose()


def read_text_bounded(path: str | Path, limit: int = MAX_YAML_BYTES,
                      cap: str = "MAX_YAML_BYTES") -> str:
    """The UTF-8 text of ``path``, refused before reading if it is over ``limit`` bytes."""
    path = Path(path)
    size = path.stat().st_size
    if size > limit:
        raise InputLimitError(str(path), f"is {size} bytes, over {limit // 2**20} MiB", cap,
                              "check that this is the right file")
    return path.read_text(encoding="utf-8")


def read_yaml(path: str | Path) -> Any:
    """Read and parse a YAML file within the caps (its size checked before reading)."""
    return load_yaml(read_text_bounded(path), source=str(path))
