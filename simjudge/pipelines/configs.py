"""Configs of the pipeline commands: one documented dataclass per ``simjudge`` command.

The command line is generated from these classes (flags, types, choices, defaults and help
all come from the fields and the ``Attributes:`` sections; see
:mod:`simjudge.tasks.spec.config`), they load from YAML (``simjudge CMD --config FILE.yaml``
or :func:`~simjudge.tasks.spec.config.load_config`), and each run directory records the
full config in its ``config.json``.

- :class:`AcquireConfig`: ``simjudge acquire`` (:func:`simjudge.pipelines.acquire.acquire`);
- :class:`ExecuteConfig`: ``simjudge execute`` (:func:`simjudge.skills.executor.execute_solution`);
- :class:`DemoConfig`: ``simjudge demo`` (:func:`simjudge.skills.rollout.run_demo`);
- :class:`DatasetBuildConfig`: ``simjudge dataset build``
  (:func:`simjudge.pipelines.dataset.build_dataset`);
- :class:`PRMTrainConfig`, :class:`PRMEvalConfig`: ``simjudge prm train|eval``
  (:mod:`simjudge.pipelines.prm_eval`);
- ``simjudge judge-bench``: :class:`simjudge.pipelines.judge_bench.JudgeBenchConfig`, next to
  its runner.

Example:
    >>> config = ExecuteConfig(solution="OpenDrawer-v0", out="runs/x", reward_solver="mpc")
    >>> config.resume, config.budget_steps
    (True, None)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from simjudge.executors import ExecutorOptions
from simjudge.tasks.spec.config import option
from simjudge.tasks.spec.config_checks import check_values

__all__ = [
    "AcquireConfig",
    "DatasetBuildConfig",
    "DemoConfig",
    "ExecuteConfig",
    "PRMEvalConfig",
    "PRMTrainConfig",
    "ProposeTasksConfig",
]

ProposerName = Literal["template", "local", "openai", "replay"]
RewardSolver = Literal["sac", "mpc", "oracle"]


@dataclass(frozen=True, kw_only=True)
class AcquireConfig(ExecutorOptions):
    """Propose, verify, execute and pool solutions for a task.

    Candidates executed in a round are independent jobs: ``--executor local`` (default)
    runs them in worker processes, ``--executor ray`` on Ray (``--ray-address``).

    Attributes:
        task: Task name or built-in id, e.g. "Open Drawer" or ``OpenDrawer-v0`` (or give
            ``tasks_from`` / ``propose_tasks`` for a stream of tasks).
        tasks_from: A task file (``simjudge propose-tasks --out FILE``, or a YAML/JSON list
            of ``{name, description, object}``): run the loop once per task.
        description: Task description (default: the built-in task's own).
        object: Asset id for a task that is not built in, e.g. ``Kettle-1``.
        candidates: Number of candidate solutions to propose.
        proposer: Who proposes: ``template`` (deterministic baseline, no LLM), ``local``
            (embedded LLM), ``openai`` (OpenAI-compatible server) or ``replay`` (recorded
            exchanges only).
        model: LLM model (registry name or server model).
        llm_cache: Folder of recorded LLM exchanges (required for ``replay``).
        temperature: LLM sampling temperature.
        max_tokens: Token budget per LLM proposal attempt (runaway replies stop here).
        verifier: How candidates are ranked before execution: ``none``, ``rule``, ``prm``
            or ``llm``.
        judge_proposer: LLM backend of the ``llm`` verifier (default: the proposer's).
        prm: Trained PRM folder (for ``--verifier prm``).
        strategy: PRM aggregation of prefix scores.
        execute: Execute the ``best`` candidate or ``all`` of them.
        reward_solver: Learner of reward subtasks: ``sac``, ``mpc`` or ``oracle``
            (privileged; plumbing tests only).
        budget_steps: SAC env steps per reward subtask (none: the executor's default).
        pool: Exemplar pool file (default ``$SIMJUDGE_POOL`` or
            ``~/.cache/simjudge/pool.sqlite``).
        use_pool: Take exemplars from the pool and add successes to it; ``--no-pool``
            proposes without exemplars and leaves the pool alone.
        top_k: Exemplars from the pool in the prompt.
        seed: Seed of proposals, scenes, planners and learners.
        out: Run directory.
        resume: Continue a run already in ``out`` (it must have the same config).
        repair_rounds: Rounds of repair: when no executed candidate is verified, the
            proposer is told the verdicts and proposes again, up to this many times.
        propose_tasks: Propose this many tasks for ``object`` (template over its
            articulation tree, or the LLM proposer) and run the loop on each.
        goal: The goal to verify against, written as a file or inline JSON (the TaskGoal
            schema, docs/goals.md); it wins over the goal derived from the task's words.
    """

    task: str | None = None
    tasks_from: str | None = None
    description: str | None = None
    object: str | None = None
    candidates: int = 4
    proposer: ProposerName = "template"
    model: str | None = None
    llm_cache: str | None = None
    temperature: float = 0.7
    max_tokens: int = 1024
    verifier: Literal["none", "rule", "prm", "llm"] = "rule"
    judge_proposer: str | None = None
    prm: str | None = None
    strategy: Literal["mean", "geometric", "min", "max", "last"] = "last"
    execute: Literal["best", "all"] = "best"
    reward_solver: RewardSolver = "sac"
    budget_steps: int | None = None
    pool: str | None = None
    use_pool: bool = option(True, negative="--no-pool")
    top_k: int = 2
    seed: int = 0
    out: str
    resume: bool = False
    repair_rounds: int = 0
    propose_tasks: int = 0
    goal: str | None = None

    def __post_init__(self) -> None:
        check_values(self)  # counts, text sizes: a clear error before any work


@dataclass(frozen=True, kw_only=True)
class ProposeTasksConfig:
    """Propose tasks an arm could do with an object, each with its derived goal.

    Attributes:
        object: Catalogue asset id or category, e.g. ``Microwave-0`` or ``Safe``.
        n: At most this many tasks (0: every template task; the LLM is asked for 5).
        proposer: ``template`` (deterministic, from the articulation tree) or an LLM backend
            (``local``, ``openai``, ``replay``).
        model: LLM model (registry name or server model).
        llm_cache: Folder of recorded LLM exchanges (required for ``replay``).
        seed: LLM sampling seed.
        out: Write the tasks (with goals) to this YAML file, for ``acquire --tasks-from``.
    """

    object: str
    n: int = 0
    proposer: ProposerName = "template"
    model: str | None = None
    llm_cache: str | None = None
    seed: int = 0
    out: str | None = None

    OUT_IS_FILE: ClassVar[bool] = True  # a YAML file

    def __post_init__(self) -> None:
        check_values(self)  # counts, text sizes: a clear error before any work


@dataclass(frozen=True, kw_only=True)
class ExecuteConfig:
    """Execute a solution: motion planning for primitives, SAC for reward subtasks.

    Attributes:
        solution: Solution YAML, a built-in task id (its reference solution), or a
            RoboGen task folder (converted as by ``simjudge import-robogen``).
        out: Run directory (verdicts, summary, video).
        seed: Scene seed and the seed of planners and SAC.
        budget_steps: SAC env-step budget per reward subtask (default: the subtask's own,
            else 50000).
        continue_on_failure: Run later subtasks after a failed one.
        reward_solver: Learner of reward subtasks: ``sac``, ``mpc`` (sampling MPC on the
            generated reward) or ``oracle`` (privileged scripted policy, for testing the
            plumbing only).
        n_envs: Parallel SAC environments (subprocesses).
        resume: Skip the subtasks a previous run in ``out`` finished; ``--no-resume``
            starts over.
        video: Render ``solution.mp4``.
        randomize: Vary the world per seed as the built-in task's env does (when the
            solution's scene is the task's); ``--no-randomize``: the fixed start.
        skills: Add successful subtasks to the skill library in this folder.
        goal: The goal to verify against, written as a file or inline JSON (the TaskGoal
            schema, docs/goals.md); it wins over the task's own or derived goal.
    """

    solution: str = option(positional=True)
    out: str
    seed: int = 0
    budget_steps: int | None = None
    continue_on_failure: bool = False
    reward_solver: RewardSolver = "sac"
    n_envs: int = 1
    resume: bool = True
    video: bool = True
    randomize: bool = True
    skills: str | None = None
    goal: str | None = None

    def __post_init__(self) -> None:
        check_values(self)  # counts, text sizes: a clear error before any work


@dataclass(frozen=True, kw_only=True)
class DemoConfig:
    """Roll out the scripted policy on a built-in task; write a video, a plot and a summary.

    Attributes:
        task: Built-in task id.
        out: Output folder.
        seed: Scene and policy seed.
    """

    task: str = "OpenDrawer-v0"
    out: str = "runs/demo"
    seed: int = 0

    def __post_init__(self) -> None:
        check_values(self)  # counts, text sizes: a clear error before any work


@dataclass(frozen=True, kw_only=True)
class DatasetBuildConfig(ExecutorOptions):
    """Propose, complete, execute and label solution prefixes (a verifier dataset).

    Every solution's execution is an independent job: ``--executor local`` (default) runs
    them in worker processes (``--workers N``), ``--executor ray`` on Ray.

    Attributes:
        tasks: Task names or ids, a comma list, e.g. "Open Drawer,Open Door".
        base: Base solutions proposed per task.
        completions: Completions proposed from every prefix of a base solution.
        proposer: Who proposes and completes: ``template``, ``local``, ``openai`` or
            ``replay``.
        model: LLM model (registry name or server model).
        llm_cache: Folder of recorded LLM exchanges (required for ``replay``).
        reward_solver: Learner of reward subtasks: ``mpc``, ``sac`` or ``oracle``.
        budget_steps: SAC env steps per reward subtask (none: the executor's default).
        seed: Seed of proposals and executions.
        out: Dataset folder (resumable).
    """

    tasks: tuple[str, ...]
    base: int = 3
    completions: int = 2
    proposer: ProposerName = "template"
    model: str | None = None
    llm_cache: str | None = None
    reward_solver: RewardSolver = "mpc"
    budget_steps: int | None = None
    seed: int = 0
    out: str

    def __post_init__(self) -> None:
        check_values(self)  # counts, text sizes: a clear error before any work


@dataclass(frozen=True, kw_only=True)
class PRMTrainConfig:
    """Train the process verifier on one split of a dataset and report best-of-N.

    Attributes:
        data: Dataset folder from ``simjudge dataset build``.
        out: Output folder (report; ``prm train`` also saves the verifier).
        split: Hold out tasks (``task``) or solutions (``solution``); ``prm eval`` reports
            both.
        test_tasks: Held-out tasks of the task split, a comma list (default: a seeded 30 %
            of the tasks).
        epochs: Training epochs of the verifier head.
        rule: Use rule-judge features besides the text embedding.
        seed: Seed of the split and of training.
    """

    data: str
    out: str
    split: Literal["task", "solution"] = "task"
    test_tasks: tuple[str, ...] = ()
    epochs: int = 150
    rule: bool = True
    seed: int = 0

    def __post_init__(self) -> None:
        check_values(self)  # counts, text sizes: a clear error before any work


@dataclass(frozen=True, kw_only=True)
class PRMEvalConfig(PRMTrainConfig):
    """Train and evaluate the process verifier on both splits (by task and by solution)."""
