"""Build the verified exemplar seed shipped in ``tasks/exemplars/``.

For each built-in task, the candidate is its hand-written reference solution
(``tasks/library/solutions/``) when there is one, else the TemplateProposer's first
solution. Each is executed with the subtask executor (motion-planning primitives; reward
subtasks with the chosen solver) and only solutions whose execution succeeded — every
subtask and the task's own goal — are written, with the verification (solver, seed,
steps, outcome) in their provenance. Run: ``python -m simjudge.pipelines.exemplar_build``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from simjudge.skills.executor import execute_solution
from simjudge.tasks.spec import REFERENCE_SOLUTIONS_DIR, atomic_write, load_library

from .configs import RewardSolver
from .pool_seed import EXEMPLAR_DIR
from .proposer import TaskRequest
from .template_proposer import TemplateProposer

__all__ = ["build_exemplars"]


def build_exemplars(out: Path = EXEMPLAR_DIR, reward_solver: RewardSolver = "mpc", seed: int = 0,
                    work: Path = Path("runs/exemplar_build")) -> list[str]:
    """Execute one candidate per built-in task; write the verified ones; return their ids."""
    from simjudge.tasks.spec import Solution

    out.mkdir(parents=True, exist_ok=True)
    verified = []
    for spec in load_library():
        reference = REFERENCE_SOLUTIONS_DIR / f"{spec.env_id}.yaml"
        if reference.exists():
            solution, origin = Solution.from_yaml(reference), "reference"
        else:
            try:
                solution = TemplateProposer().propose(TaskRequest.from_spec(spec))[0]
            except ValueError:
                continue  # rigid-object tasks have no template
            origin = "template"
        summary = execute_solution(solution, work / spec.env_id, seed=seed,
                                   reward_solver=reward_solver, video=False, resume=True)
        print(f"{spec.env_id:26s} {origin:9s} {'verified' if summary.task_success else 'failed'}")
        if not summary.task_success:
            continue
        provenance = {**solution.provenance, "origin": origin, "asset": spec.asset,
                      "tags": list(spec.tags),
                      "verified": {"reward_solver": reward_solver, "seed": seed,
                                   "subtask_success": summary.subtask_success,
                                   "env_steps": summary.env_steps}}
        # pool entries are keyed by the task's name (so a task never retrieves itself)
        named = solution.model_copy(update={"task": spec.name, "description": spec.description,
                                            "provenance": provenance})
        atomic_write(out / f"{spec.env_id}.yaml", named.to_yaml())
        verified.append(spec.env_id)
    return verified


if __name__ == "__main__":  # pragma: no cover
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default=str(EXEMPLAR_DIR))
    parser.add_argument("--reward-solver", default="mpc")
    args = parser.parse_args()
    ids = build_exemplars(Path(args.out), args.reward_solver)
    print(f"{len(ids)} verified exemplars")
