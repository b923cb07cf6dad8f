"""Bounded reading of YAML and JSON input: size, nesting and YAML alias expansion capped.

The loaders live in :mod:`simjudge.envs.bounded_input` (so that scene files are read with the
same caps); this module is their home in the task-spec layer, where solutions, tasks, configs
and RoboGen folders are read.
"""

from __future__ import annotations

from simjudge.envs.bounded_input import (
    MAX_ALIASES,
    MAX_DEPTH,
    MAX_JSON_BYTES,
    MAX_YAML_BYTES,
    MAX_YAML_NODES,
    InputLimitError,
    json_depth,
    load_json_text,
    load_yaml,
    read_text_bounded,
    read_yaml,
)

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
