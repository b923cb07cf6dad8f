"""Compile LLM-written reward, success and primitive code into bounded callables.

Generated code is never imported or exec'd raw. It is checked against a size budget
(linear time, :mod:`~.budget`), parsed with :mod:`ast` and checked against an allowlist
(:func:`check_source` reports every violation with its line, and the static call fan-out
is bounded), rewritten so that operators, indexing, stores and method calls go through
size and work guards, compiled once, and run over an opaque ``self`` that only the state
API functions can resolve to the caller's read-only view.

Prove it bounded or run it isolated. A cost proof (:mod:`~.prove`: an abstract
interpreter over bounded types and a call table whose rules read every positional and
keyword argument, see :mod:`~.costcalls`) gives every compiled reward and success a
``cost_class``: ``"bounded"`` when every value it can hold has a bounded size and every
operation a bounded work, else ``"unproven"`` with the first reason. In the default
``"in-process"`` mode only bounded code runs in this process (guards and tracer stay as a
second line); everything else runs, transparently, in an OS-bounded worker process
(:mod:`~.sandbox`: ``RLIMIT_AS``, ``RLIMIT_CPU``, ``RLIMIT_FSIZE`` = 0, no descriptors but its
pipe, no network where the kernel allows, seccomp where libseccomp loads, a per-call
deadline enforced by the parent with a kill and a restart) whose state API calls this
process answers, so any api mapping and any view work. ``runs_in`` and ``reason`` record
the decision. The ``"subprocess"`` mode always uses the worker (api and views pickled to
it). Primitive blocks follow the same rule: a proven block runs here, any other in the
worker, whose primitive calls this process runs on the live env, keeping their results
(frames, states) here behind stand-ins (:mod:`~.held`). In this process, code with loops (or a large call
fan-out) runs under a per-thread ``sys.settrace`` budget (wall time, opcode steps,
generated-function calls, call depth, memory growth); loop-free code is bounded by its
length and checked against the deadline. No state survives a call: a module that is not
pure runs afresh in a namespace cleared when the call ends. Every failure is a
:class:`GeneratedCodeError` subclass whose message says what to fix.

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

from .cache import compile_once
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
    "compile_once",
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
