"""Import RoboGen's tasks: ``import_robogen(task_dir) -> (Solution, ImportReport)``.

RoboGen (Genesis-Embodied-AI/RoboGen) ships manipulation tasks written by GPT-4 as
folders: a scene YAML, ``substeps.txt`` / ``substep_types.txt`` / ``action_spaces.txt``
and one Python class per substep. :func:`import_robogen` turns such a folder into a
:class:`~simjudge.tasks.spec.Solution` that ``simjudge execute`` runs as written: the
class files are read with :mod:`ast` (never imported), PartNet-Mobility objects become
catalogue instances (:data:`CATEGORY_MAP`; stand-ins for missing categories are
reported), their link and joint names are remapped by meaning, and every change is
listed in the :class:`ImportReport` and in the solution's provenance.

Example:
    >>> from simjudge.pipelines.robogen import MISSING_CATEGORIES
    >>> "Dishwasher" in MISSING_CATEGORIES and "Oven" not in MISSING_CATEGORIES
    True
"""

from __future__ import annotations

from .categories import (
    CATEGORY_MAP,
    MISSING_CATEGORIES,
    UNSUPPORTED_CATEGORIES,
    category_table,
    rigid_category,
)
from .convert import (
    ImportReport,
    import_robogen,
    load_solution_or_robogen,
    robogen_goal,
    solution_yaml,
)
from .reader import RobogenImportError, is_robogen_task_dir, read_task

__all__ = [
    "CATEGORY_MAP",
    "MISSING_CATEGORIES",
    "UNSUPPORTED_CATEGORIES",
    "ImportReport",
    "RobogenImportError",
    "category_table",
    "import_robogen",
    "is_robogen_task_dir",
    "load_solution_or_robogen",
    "read_task",
    "rigid_category",
    "robogen_goal",
    "solution_yaml",
]
