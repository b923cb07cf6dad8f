"""simjudge.skills: planning primitives, SAC, MPC, scripted policies and the subtask executor.

Names load on first use (module ``__getattr__``), so importing the package costs nothing
beyond what its submodules need:

    >>> from simjudge.skills import ScriptedPolicy
    >>> ScriptedPolicy.__name__
    'ScriptedPolicy'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from simjudge.envs.lazy import lazy_attributes

if TYPE_CHECKING:
    from simjudge.skills.executor import execute_solution
    from simjudge.skills.library import SkillLibrary
    from simjudge.skills.rollout import rollout
    from simjudge.skills.scripted import ScriptedPolicy

_LAZY: dict[str, str] = {
    "ScriptedPolicy": "simjudge.skills.scripted",
    "rollout": "simjudge.skills.rollout",
    "execute_solution": "simjudge.skills.executor",
    "SkillLibrary": "simjudge.skills.library",
}
"""Public name -> the module that defines it."""

__all__ = [
    "ScriptedPolicy",
    "SkillLibrary",
    "execute_solution",
    "rollout",
]


__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, globals())
