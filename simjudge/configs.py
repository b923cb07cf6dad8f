"""Configs of the command-line-only commands (listings, pictures, replays).

Each class is one ``simjudge`` command; :mod:`simjudge.cli` generates its flags from the
fields and the ``Attributes:`` docstring section (see :mod:`simjudge.cli_configs`). The
commands that run a pipeline have their configs next to it (:mod:`simjudge.pipelines.configs`,
:class:`simjudge.pipelines.judge_bench.JudgeBenchConfig`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from simjudge.tasks.spec.config import option
from simjudge.tasks.spec.config_checks import check_values

__all__ = [
    "AssetsGenerateConfig",
    "AssetsListConfig",
    "AssetsShowConfig",
    "PoolListConfig",
    "PoolSearchConfig",
    "PoolShowConfig",
    "RenderConfig",
    "SkillsListConfig",
    "SkillsReplayConfig",
    "TasksListConfig",
]


@dataclass(frozen=True, kw_only=True)
class AssetsListConfig:
    """List the assets of the procedural catalogue.

    Attributes:
        json: Print machine-readable JSON instead of a table.
    """

    json: bool = False


@dataclass(frozen=True, kw_only=True)
class AssetsShowConfig:
    """Show an asset's articulation tree.

    Attributes:
        asset_id: Catalogue id, e.g. ``StorageFurniture-0``.
    """

    asset_id: str = option(positional=True)


@dataclass(frozen=True, kw_only=True)
class AssetsGenerateConfig:
    """Regenerate the procedural assets.

    Attributes:
        out: Output folder (default: the package's ``assets/``).
    """

    out: str | None = None


@dataclass(frozen=True, kw_only=True)
class TasksListConfig:
    """List the built-in tasks (Gymnasium ids ``simjudge/<EnvId>``).

    Attributes:
        json: Print machine-readable JSON instead of a table.
    """

    json: bool = False


@dataclass(frozen=True, kw_only=True)
class RenderConfig:
    """Render a picture of a task's scene.

    Attributes:
        task: Task id or name, e.g. ``OpenDrawer-v0``.
        out: Image file to write.
        camera: Camera name (default: the scene's default camera).
        seed: Scene seed.
    """

    task: str = option(positional=True)
    out: str = "frame.png"
    camera: str | None = None
    seed: int = 0

    OUT_IS_FILE: ClassVar[bool] = True


@dataclass(frozen=True, kw_only=True)
class SkillsListConfig:
    """List the skills stored in a skill library.

    Attributes:
        root: Library folder (default ``$SIMJUDGE_SKILLS_DIR`` or ``~/.cache/simjudge/skills``).
        json: Print machine-readable JSON instead of a table.
    """

    root: str | None = None
    json: bool = False


@dataclass(frozen=True, kw_only=True)
class SkillsReplayConfig:
    """Replay a skill exactly from its recorded start state.

    Attributes:
        skill_id: The skill's id (see ``simjudge skills list``).
        root: Library folder (default ``$SIMJUDGE_SKILLS_DIR`` or ``~/.cache/simjudge/skills``).
        video: Write the replay to this mp4 (none: no video).
    """

    skill_id: str = option(positional=True)
    root: str | None = None
    video: str | None = None


@dataclass(frozen=True, kw_only=True)
class PoolListConfig:
    """List the tasks in the exemplar pool.

    Attributes:
        pool: Exemplar pool file (default ``$SIMJUDGE_POOL`` or ``~/.cache/simjudge/pool.sqlite``).
    """

    pool: str | None = None


@dataclass(frozen=True, kw_only=True)
class PoolShowConfig:
    """Show a pooled task with its solutions and outcomes.

    Attributes:
        name: Task name in the pool.
        pool: Exemplar pool file (default ``$SIMJUDGE_POOL`` or ``~/.cache/simjudge/pool.sqlite``).
    """

    name: str = option(positional=True)
    pool: str | None = None

    def __post_init__(self) -> None:
        check_values(self)  # counts, text sizes: a clear error before any work


@dataclass(frozen=True, kw_only=True)
class PoolSearchConfig:
    """Search the exemplar pool by meaning (MiniLM cosine similarity).

    Attributes:
        text: What to search for, e.g. "open the fridge".
        pool: Exemplar pool file (default ``$SIMJUDGE_POOL`` or ``~/.cache/simjudge/pool.sqlite``).
        k: Number of results.
    """

    text: str = option(positional=True)
    pool: str | None = None
    k: int = 5

    def __post_init__(self) -> None:
        check_values(self)  # counts, text sizes: a clear error before any work
