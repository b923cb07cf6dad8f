"""Compile LLM-written reward, success and primitive code into bounded callables.

Generated code is never imported or exec'd raw. It is parsed with :mod:`ast` and
checked against an allowlist (:func:`check_source` reports every violation with
its line), rewritten so that operators, indexing and method calls go through size
guards, compiled, and run over an opaque ``self`` that only the state API functions
can resolve to the caller's read-only view. Each call runs under a per-thread
``sys.settrace`` budget (wall time, opcode steps, call depth, memory growth); the
optional subprocess mode adds an address-space rlimit and a hard kill. Every failure
is a :class:`GeneratedCodeError` subclass whose message says what to fix.

Example:
    >>> import numpy as np
    >>> api = {"get_joint_state": lambda view, obj, joint: view[joint]}
    >>> reward = compile_reward('''
    ... def _compute_reward(self):
    ...     angle = get_joint_state(self, "Door", "joint_0")
    ...     return -abs(angle - 1.0), angle > 0.9
    ... ''', api)
    >>> reward({"joint_0": 0.5})
    (-0.5, False)
"""

from __future__ import annotations

from .checker import check_source
from .compiler import (
    CompiledBlock,
    CompiledReward,
    CompiledSuccess,
    compile_primitive_block,
    compile_reward,
    compile_success,
)
from .errors import (
    CodeLimitError,
    CodeResourceError,
    CodeRuntimeError,
    CodeSyntaxError,
    CodeTimeoutError,
    DisallowedCodeError,
    GeneratedCodeError,
    InvalidOutputError,
    Issue,
    MissingOutputError,
    NonFiniteRewardError,
)
from .extract import extract_code, extract_code_blocks
from .policy import PRIMITIVE_NAMES, STATE_API_NAMES
from .runtime import ExecutionLimits

__all__ = [
    # compile and check
    "check_source",
    "compile_primitive_block",
    "compile_reward",
    "compile_success",
    "extract_code",
    "extract_code_blocks",
    "CompiledBlock",
    "CompiledReward",
    "CompiledSuccess",
    "ExecutionLimits",
    "Issue",
    "PRIMITIVE_NAMES",
    "STATE_API_NAMES",
    # errors
    "GeneratedCodeError",
    "CodeSyntaxError",
    "DisallowedCodeError",
    "CodeLimitError",
    "CodeTimeoutError",
    "CodeResourceError",
    "CodeRuntimeError",
    "InvalidOutputError",
    "MissingOutputError",
    "NonFiniteRewardError",
]
