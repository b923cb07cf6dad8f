"""Typed errors and static-analysis issues for generated code.

Every way in which LLM-written code can fail (it does not parse, it uses something
outside the allowlist, it runs too long, it raises, it returns the wrong thing) maps
to one subclass of :class:`GeneratedCodeError`. Callers record the failure as a
verdict instead of crashing, and the message says what is wrong and how to fix it,
prefixed with the line number in the submitted source so that it can be fed back to
the proposer verbatim.

Hierarchy (:class:`~simjudge.envs.errors.SimjudgeError` is the root of every simjudge
error)::

    GeneratedCodeError
    +-- CodeSyntaxError         the source does not parse
    +-- DisallowedCodeError     outside the allowlist (static check or runtime guard)
    +-- CodeLimitError          a resource bound was hit
    |   +-- CodeTimeoutError    wall-time limit or step budget exceeded
    |   +-- CodeResourceError   memory, allocation size, integer size or call depth
    +-- CodeRuntimeError        the code (or a state API call it made) raised
    +-- InvalidOutputError      the result has the wrong type or shape
        +-- MissingOutputError  no return value / no ``success`` variable
        +-- NonFiniteRewardError  the reward is NaN or infinite
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..errors import SimjudgeError

__all__ = [
    "CodeLimitError",
    "CodeResourceError",
    "CodeRuntimeError",
    "CodeSyntaxError",
    "CodeTimeoutError",
    "DisallowedCodeError",
    "GeneratedCodeError",
    "InvalidOutputError",
    "Issue",
    "MissingOutputError",
    "NonFiniteRewardError",
]


class GeneratedCodeError(SimjudgeError):
    """Base class of every failure of generated code.

    Attributes:
        message: What is wrong and how to fix it, without the line prefix.
        line: 1-based line number in the submitted source, or None if unknown.
        issues: For static-check failures, every issue found (not only the first),
            so that a proposer can fix them all in one round.
    """

    def __init__(
        self, message: str, line: int | None = None, *, issues: tuple[Issue, ...] = ()
    ) -> None:
        self.message = message
        self.line = line
        self.issues = tuple(issues)
        super().__init__(self._render())

    def _render(self) -> str:
        text = f"line {self.line}: {self.message}" if self.line is not None else self.message
        others = [
            i
            for i in self.issues
            if i.severity == "error" and (i.line, i.message) != (self.line, self.message)
        ]
        if others:
            text += f" (and {len(others)} more: " + "; ".join(str(i) for i in others) + ")"
        return text

    def with_line(self, line: int | None) -> GeneratedCodeError:
        """Return the same error with ``line`` filled in if it was unknown."""
        if self.line is not None or line is None:
            return self
        err = type(self)(self.message, line, issues=self.issues)
        err.__cause__ = self.__cause__
        return err

    def __reduce__(self) -> tuple[object, ...]:
        # Keyword-only ``issues`` would be lost by the default Exception pickling, and
        # subprocess mode ships errors from the child back to the parent.
        return (_rebuild_error, (type(self), self.message, self.line, self.issues))


def _rebuild_error(
    cls: type[GeneratedCodeError], message: str, line: int | None, issues: tuple[Issue, ...]
) -> GeneratedCodeError:
    return cls(message, line, issues=issues)


class CodeSyntaxError(GeneratedCodeError):
    """The source is not valid Python."""


class DisallowedCodeError(GeneratedCodeError):
    """The code uses a construct, name, attribute or call outside the allowlist."""


class CodeLimitError(GeneratedCodeError):
    """The code hit one of the :class:`ExecutionLimits` bounds."""


class CodeTimeoutError(CodeLimitError):
    """The wall-time limit or the step budget was exceeded (e.g. an infinite loop)."""


class CodeResourceError(CodeLimitError):
    """Too much memory, too large an allocation or integer, or too deep calls."""


class CodeRuntimeError(GeneratedCodeError):
    """The code raised while running, or a state API function it called failed."""


class InvalidOutputError(GeneratedCodeError):
    """The returned value cannot be read as the expected output."""


class MissingOutputError(InvalidOutputError):
    """The code does not return anything, or does not assign ``success``."""


class NonFiniteRewardError(InvalidOutputError):
    """The reward is NaN or infinite."""


Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Issue:
    """One finding of the static check.

    Attributes:
        line: 1-based line number in the submitted source (None for whole-source
            findings such as a missing entry function).
        col: 0-based column offset, or None.
        code: Short stable identifier, e.g. ``"disallowed-call"``, usable by a rule
            judge to count categories of mistakes.
        message: What is wrong and how to fix it.
        severity: ``"error"`` blocks compilation; ``"warning"`` is advice only.
        error_type: The :class:`GeneratedCodeError` subclass raised for this issue.
    """

    line: int | None
    col: int | None
    code: str
    message: str
    severity: Severity = "error"
    error_type: type[GeneratedCodeError] = DisallowedCodeError

    def __str__(self) -> str:
        prefix = f"line {self.line}: " if self.line is not None else ""
        tag = "warning: " if self.severity == "warning" else ""
        return f"{prefix}{tag}{self.message}"

    def to_error(self, issues: tuple[Issue, ...] = ()) -> GeneratedCodeError:
        """Build the typed error for this issue, carrying all ``issues`` found."""
        return self.error_type(self.message, self.line, issues=issues or (self,))
