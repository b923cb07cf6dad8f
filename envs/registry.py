"""One registry type for everything simjudge builds by name: backends, judges, policies.

A :class:`Registry` maps names to factories (a callable, or ``"module:attribute"`` imported
on first use, so registering costs no import), with a one-line summary each. Unknown names
get the registered names and the closest match; parameters a factory does not take are named
with those it does; a factory whose optional dependency is missing says which extra to
install. Third-party packages add entries through the entry-point group
``simjudge.<kind>s`` (``simjudge.judges``, ``simjudge.policies``, ``simjudge.backends``):
each entry point's name is the registry name, its value ``module:attribute`` the factory.

Example:
    >>> shapes = Registry("shape", error=KeyError)
    >>> shapes.register("box", lambda size=1.0: ("box", size), "an axis-aligned box")
    >>> shapes.make("box", size=2.0)
    ('box', 2.0)
    >>> shapes.make("bx")
    Traceback (most recent call last):
    ...
    KeyError: "unknown shape 'bx'; registered shapes are ['box']. Did you mean 'box'?"
"""

from __future__ import annotations

import ast
import difflib
import importlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from .errors import SimjudgeError

__all__ = ["MissingExtraError", "Registry", "RegistryEntry", "parse_spec_params"]

T = TypeVar("T")


class MissingExtraError(SimjudgeError, ImportError):
    """An entry needs an optional dependency that is not installed; the message names the extra."""


@dataclass(frozen=True)
class RegistryEntry:
    """A registered name.

    Attributes:
        name: The registry name.
        factory: A callable, or ``"module:attribute"`` imported on first use.
        summary: One line for listings.
        extra: The ``pip install simjudge[EXTRA]`` that brings its dependencies (or "").
        requires: The top-level packages that extra provides.
    """

    name: str
    factory: Callable[..., Any] | str
    summary: str
    extra: str = ""
    requires: tuple[str, ...] = ()


class Registry(Generic[T]):
    """Names -> factories of one kind of thing.

    Args:
        kind: What is registered, singular ("judge"), used in messages and the entry-point
            group ``simjudge.<plural>``.
        plural: The plural (default ``kind + "s"``).
        error: The exception type an unknown name raises (a ``LookupError`` or ``ValueError``
            subclass of the caller's error family).
        hint: Text appended to the unknown-name message (other ways to name one).
        listed_as: The word before the names in that message ("registered", "supported").
    """

    def __init__(self, kind: str, *, plural: str | None = None,
                 error: type[Exception] = KeyError, hint: str = "",
                 listed_as: str = "registered") -> None:
        self.kind = kind
        self.listed_as = listed_as
        self.plural = plural or kind + "s"
        self.error = error
        self.hint = hint
        self._entries: dict[str, RegistryEntry] = {}
        self._plugins_loaded = False

    def register(self, name: str, factory: Callable[..., T] | str, summary: str = "", *,
                 replace: bool = False, extra: str = "", requires: tuple[str, ...] = ()) -> None:
        """Register ``factory`` under ``name`` (letters, digits, ``-``, ``_``).

        Raises:
            ValueError: The name is malformed, or taken and ``replace`` is False.
        """
        if not name or not all(c.isalnum() or c in "-_" for c in name):
            raise ValueError(f"{self.kind} names use letters, digits, '-' and '_'; got {name!r}")
        if name in self._entries and not replace:
            raise ValueError(f"{self.kind} {name!r} is already registered; pass replace=True "
                             "to override it")
        if not summary and not isinstance(factory, str):
            summary = (inspect.getdoc(factory) or "").split("\n")[0]
        self._entries[name] = RegistryEntry(name, factory, summary, extra, tuple(requires))

    def _load_plugins(self) -> None:
        if self._plugins_loaded:
            return
        self._plugins_loaded = True
        from importlib.metadata import entry_points

        for point in entry_points(group=f"simjudge.{self.plural}"):
            if point.name not in self._entries:
                self._entries[point.name] = RegistryEntry(point.name, point.value,
                                                          f"plugin ({point.value})")

    def names(self) -> list[str]:
        """The registered names, sorted."""
        self._load_plugins()
        return sorted(self._entries)

    def summaries(self) -> dict[str, str]:
        """Registered names -> one-line summaries, sorted by name."""
        return {name: self._entries[name].summary for name in self.names()}

    def __contains__(self, name: object) -> bool:
        self._load_plugins()
        return name in self._entries

    def entry(self, name: str) -> RegistryEntry:
        """The entry of ``name``.

        Raises:
            Exception: ``self.error``, naming the registered names and the closest match.
        """
        self._load_plugins()
        entry = self._entries.get(name)
        if entry is None:
            close = difflib.get_close_matches(name, list(self._entries), n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise self.error(f"unknown {self.kind} {name!r}; {self.listed_as} {self.plural} are "
                             f"{sorted(self._entries)}{self.hint}.{hint}")
        return entry

    def factory(self, name: str) -> Callable[..., T]:
        """The factory of ``name``, imported if registered as ``"module:attribute"``.

        Raises:
            MissingExtraError: Its module needs a package that is not installed.
        """
        entry = self.entry(name)
        if not isinstance(entry.factory, str):
            return entry.factory
        module, _, attribute = entry.factory.partition(":")
        try:
            loaded = importlib.import_module(module)
        except ModuleNotFoundError as error:
            missing = (error.name or "").partition(".")[0]
            if entry.extra and (not entry.requires or missing in entry.requires):
                raise MissingExtraError(
                    f"{self.kind} {name!r} needs {missing!r}, which is not installed: "
                    f"pip install 'simjudge[{entry.extra}]'") from error
            raise
        factory: Callable[..., T] = getattr(loaded, attribute)
        return factory

    def parameters(self, name: str) -> list[str] | None:
        """The keyword parameters the factory of ``name`` takes (None: any)."""
        return _parameters(self.factory(name))

    def make(self, name: str, **params: Any) -> T:
        """Build ``name`` with ``params``.

        Raises:
            TypeError: A parameter the factory does not take (with those it takes).
        """
        factory = self.factory(name)
        accepted = _parameters(factory)
        unknown = sorted(set(params) - set(accepted)) if accepted is not None else []
        if unknown:
            raise TypeError(f"{self.kind} {name!r} takes no parameter(s) {unknown}; it takes "
                            f"{accepted}")
        return factory(**params)


def _parameters(factory: Callable[..., Any]) -> list[str] | None:
    try:
        sig = inspect.signature(factory)
    except (TypeError, ValueError):  # pragma: no cover - builtins
        return None
    if any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
        return None
    return [n for n, p in sig.parameters.items()
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]


_WORDS = {"true": True, "false": False, "none": None, "null": None}


def _value(text: str) -> Any:
    text = text.strip()
    if text.lower() in _WORDS:
        return _WORDS[text.lower()]
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _split_top_level(text: str) -> list[str]:
    """Split on commas outside brackets and quotes (``goal={'a': 1, 'b': 2}`` stays whole)."""
    parts, depth, quote, start = [], 0, "", 0
    for i, char in enumerate(text):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def parse_spec_params(spec: str, rest: str, kind: str = "judge",
                      error: type[ValueError] = ValueError) -> dict[str, Any]:
    """The typed parameters of a spec's ``key=value,...`` part ``rest`` (judges, policies).

    Values are read as Python literals (``true``/``none`` too), else kept as text; commas
    inside brackets or quotes do not split.

    >>> parse_spec_params("noisy:sigma=0.1,seed=3", "sigma=0.1,seed=3")
    {'sigma': 0.1, 'seed': 3}

    Raises:
        ValueError: (or ``error``) A parameter is not ``key=value`` or is repeated; the
            message names the ``kind`` of spec.
    """
    params: dict[str, Any] = {}
    for part in filter(None, (p.strip() for p in _split_top_level(rest))):
        key, eq, value = part.partition("=")
        key = key.strip()
        if not eq or not key.isidentifier():
            raise error(f"{kind} spec {spec!r}: parameter {part!r} must be written key=value")
        if key in params:
            raise error(f"{kind} spec {spec!r}: parameter {key!r} is given twice")
        params[key] = _value(value)
    return params
