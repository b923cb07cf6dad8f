"""Old import paths of modules that moved out of ``simjudge.tasks`` (wave 3), as aliases.

``simjudge.tasks`` holds what a task is (spec, goals, library) and nothing else; the LLM
clients, policies, executors and pipelines have homes of their own. Code written against
the old paths keeps working: ``import simjudge.tasks.policies.remote`` gives the very module
object of ``simjudge.policies.remote`` (one module, one copy, never a second import of it).

Example:
    >>> import simjudge.tasks.llm.base as old
    >>> import simjudge.llm.base as new
    >>> old is new
    True
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
from collections.abc import Sequence
from types import ModuleType

__all__ = ["MOVED", "install", "new_name"]

_SUBPACKAGES = {
    "llm": "simjudge.llm",
    "policies": "simjudge.policies",
    "executors": "simjudge.executors",
    "arena": "simjudge.pipelines.arena",
    "audit": "simjudge.pipelines.audit",
    "plans": "simjudge.pipelines.plans",
    "report": "simjudge.pipelines.report",
    "robogen": "simjudge.pipelines.robogen",
}
_PIPELINE_MODULES = (
    "acquire", "acquire_files", "acquire_stream", "components", "configs", "dataset",
    "embedding_cache", "exemplar_build", "goal_report", "goal_writer", "judge_bench",
    "llm_proposer", "pool", "pool_seed", "prm_eval", "proposer", "task_proposals",
    "template_proposer", "verifiers",
)
MOVED: dict[str, str] = {
    **{f"simjudge.tasks.{old}": new for old, new in _SUBPACKAGES.items()},
    **{f"simjudge.tasks.{m}": f"simjudge.pipelines.{m}" for m in _PIPELINE_MODULES},
}
"""Old module prefix -> its new home."""


def new_name(module: str) -> str | None:
    """The new name of a moved module (or one inside a moved package), else None.

    >>> new_name("simjudge.tasks.policies.remote")
    'simjudge.policies.remote'
    >>> new_name("simjudge.tasks.spec") is None
    True
    """
    head, _, _ = module.partition(".")
    if head != "simjudge":
        return None
    parts = module.split(".")
    prefix = ".".join(parts[:3])
    target = MOVED.get(prefix)
    return None if target is None else target + module[len(prefix):]


class _Alias(importlib.abc.Loader):
    """Loads an old name as the module object of its new name."""

    def __init__(self, target: str) -> None:
        self._target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return importlib.import_module(self._target)

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the module is the new one, already executed."""


class _MovedFinder(importlib.abc.MetaPathFinder):
    """Finds old names of moved modules (first on ``sys.meta_path`` for those names only)."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        new = new_name(fullname)
        if new is None:
            return None
        return importlib.util.spec_from_loader(fullname, _Alias(new))


def install() -> None:
    """Put the finder on ``sys.meta_path`` once (``import simjudge`` does this)."""
    if not any(isinstance(f, _MovedFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _MovedFinder())
