"""Names of a package loaded on first use: the module ``__getattr__`` of its public face.

A package's ``__init__`` lists its public names and the modules that define them; this makes
the ``__getattr__`` and ``__dir__`` that import a module only when one of its names is first
read, so importing the package costs nothing beyond what its submodules need.

Example:
    >>> getter, lister = lazy_attributes("demo", {"sqrt": "math"}, {})
    >>> getter("sqrt")(9.0), "sqrt" in lister()
    (3.0, True)
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any

__all__ = ["lazy_attributes"]


def lazy_attributes(
    package: str, table: Mapping[str, str], namespace: MutableMapping[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package`` for the names in ``table``.

    Args:
        package: The package's name (for the error message).
        table: Public name -> the module that defines it.
        namespace: The package's ``globals()``: a loaded name is kept there.
    """

    def getattr_(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def dir_() -> list[str]:
        return sorted(set(namespace) | set(table))

    return getattr_, dir_
