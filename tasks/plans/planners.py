"""Who answers: planners for Q1 and responders for Q2, Q3 and failure analysis.

``oracle`` answers with the reference plan, the DAG frontier, the predicates and the
rule-based diagnosis (the ceiling: 10 on node correctness and symbolic completion).
``fault:<kind>`` is the oracle with one planning fault in its plan (tests: it must score
lower where the fault bites). ``llamacpp[:model]`` / ``openai[:model]`` prompt an LLM with
the task text, the scene's objects and articulation trees and the skill vocabulary; every
exchange is logged in ``RUN/llm_log.jsonl`` and cached in ``RUN/llm_cache`` (replayable);
``replay[:backend:model]`` answers only from such a cache.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simjudge.tasks.llm import LLMClient, LLMError, complete_structured, make_client

from .faults import PLANNING_FAULTS, inject_planning_fault, privileged_diagnosis
from .groundtruth import TaskPlan
from .physical import EXECUTION_FAULTS
from .schema import PLAN_JSON_SCHEMA, SKILLS, Plan, PlanError, parse_plan

__all__ = ["Agent", "LLMAgent", "OracleAgent", "FaultAgent", "PlanAnswer", "make_agent"]


@dataclass
class PlanAnswer:
    """A planner's answer to Q1.

    Attributes:
        plan: The validated plan, or None when none could be had.
        error: Why not ("" when there is a plan).
    """

    plan: Plan | None
    error: str = ""


class Agent:
    """Answers the four kinds of question about one task at a time."""

    name = "agent"

    def describe(self) -> dict[str, Any]:
        """What to record in the run's config."""
        return {"agent": self.name}

    def plan(self, plan: TaskPlan, scene_text: str) -> PlanAnswer:  # pragma: no cover
        """Q1: a plan for the task."""
        raise NotImplementedError

    def next_step(self, plan: TaskPlan, scene_text: str, item: dict[str, Any]) -> str:  # pragma: no cover
        """Q2: the next step after ``item["executed"]``."""
        raise NotImplementedError

    def state(self, plan: TaskPlan, scene_text: str, item: dict[str, Any]) -> bool | None:  # pragma: no cover
        """Q3: yes/no, or None for no usable answer."""
        raise NotImplementedError

    def diagnose(self, plan: TaskPlan, scene_text: str, item: dict[str, Any]) -> str:  # pragma: no cover
        """Failure analysis: one label from the item's options."""
        raise NotImplementedError


class OracleAgent(Agent):
    """The reference answers (privileged)."""

    name = "oracle"

    def plan(self, plan: TaskPlan, scene_text: str) -> PlanAnswer:
        """The reference plan."""
        return PlanAnswer(Plan(task_summary=plan.plan.task_summary,
                               plan_step=plan.reference_steps(), reason="reference plan"))

    def next_step(self, plan: TaskPlan, scene_text: str, item: dict[str, Any]) -> str:
        """The frontier's first writing."""
        return str(item["frontier"][0])

    def state(self, plan: TaskPlan, scene_text: str, item: dict[str, Any]) -> bool | None:
        """The predicate read on the real state."""
        return bool(item["answer"])

    def diagnose(self, plan: TaskPlan, scene_text: str, item: dict[str, Any]) -> str:
        """The rule-based diagnosis from the reference plan and the rollout telemetry."""
        return privileged_diagnosis(plan, item)


class FaultAgent(OracleAgent):
    """The oracle whose plans carry one planning fault.

    Args:
        kind: One of :data:`~simjudge.tasks.plans.faults.PLANNING_FAULTS`.
    """

    def __init__(self, kind: str) -> None:
        if kind not in PLANNING_FAULTS:
            raise ValueError(f"unknown planning fault {kind!r}; use fault:<kind> with kind in "
                             f"{list(PLANNING_FAULTS)}")
        self.kind = kind
        self.name = f"fault:{kind}"

    def plan(self, plan: TaskPlan, scene_text: str) -> PlanAnswer:
        """The reference plan with the fault (unchanged where the fault cannot apply)."""
        steps = inject_planning_fault(plan, self.kind) or plan.reference_steps()
        return PlanAnswer(Plan(task_summary=plan.plan.task_summary, plan_step=steps,
                               reason=f"reference plan with a {self.kind} fault"))


_SYSTEM = ("You are the planning module of a one-armed robot with a suction gripper. "
           "Answer with JSON only.")
_EXAMPLE = ('{"task_summary": "put the apple in the basket", "plan_step": ["pick_up(apple)", '
            '"place(apple, in_basket)"], "reason": "pick the apple, then drop it in"}')


def skills_text() -> str:
    """The skill vocabulary, one line per skill (for prompts)."""
    return "\n".join(f"- {s.signature}: needs {s.needs}; {s.effect}" for s in SKILLS.values())


class LLMAgent(Agent):
    """An LLM answering through any :class:`~simjudge.tasks.llm.LLMClient`.

    Args:
        client: The client (cached and logged by :func:`make_agent`).
        max_tokens: Token budget per reply.
        seed: Sampling seed.
    """

    def __init__(self, client: LLMClient, max_tokens: int = 384, seed: int = 0) -> None:
        self.client = client
        self.max_tokens = int(max_tokens)
        self.seed = int(seed)
        self.name = f"{client.backend}:{client.model}"

    def describe(self) -> dict[str, Any]:
        """The client's description."""
        return {"agent": self.name, "client": self.client.describe()}

    def _ask(self, prompt: str, schema: dict[str, Any]) -> Any:
        messages = [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": prompt}]
        value, _ = complete_structured(self.client, messages, schema, retries=1,
                                       max_tokens=self.max_tokens, seed=self.seed)
        return value

    def plan(self, plan: TaskPlan, scene_text: str) -> PlanAnswer:
        """Prompt for a plan; validate it."""
        prompt = (f"Task: {plan.spec.description}\n\n{scene_text}\n\nSkills:\n{skills_text()}\n\n"
                  "Write the plan as JSON like this example from another task:\n"
                  f"{_EXAMPLE}\nEach step is skill(object[, parameter]) using the object names "
                  "above.")
        try:
            value = self._ask(prompt, PLAN_JSON_SCHEMA)
            return PlanAnswer(parse_plan(value, source="LLM plan"))
        except (LLMError, PlanError) as exc:
            return PlanAnswer(None, f"{type(exc).__name__}: {str(exc)[:300]}")

    def next_step(self, plan: TaskPlan, scene_text: str, item: dict[str, Any]) -> str:
        """Prompt for the next step after the executed prefix."""
        done = "\n".join(f"{i + 1}. {s}" for i, s in enumerate(item["executed"])) or "(nothing yet)"
        prompt = (f"Task: {plan.spec.description}\n\n{scene_text}\n\nSkills:\n{skills_text()}\n\n"
                  f"Steps executed so far:\n{done}\n\nWhat is the single next step? Reply "
                  '{"next_step": "skill(object[, parameter])"}.')
        schema = {"type": "object", "properties": {"next_step": {"type": "string"}},
                  "required": ["next_step"]}
        try:
            return str(self._ask(prompt, schema)["next_step"])
        except LLMError:
            return ""

    def state(self, plan: TaskPlan, scene_text: str, item: dict[str, Any]) -> bool | None:
        """Prompt a yes/no question about the state after the executed steps."""
        done = "\n".join(f"{i + 1}. {s}" for i, s in enumerate(item["executed"]))
        image = f"\nA picture of the current state: {item['image']}" if item.get("image") else ""
        prompt = (f"Task: {plan.spec.description}\n\n{scene_text}\n\nThe robot tried these "
                  f"steps (some may have failed):\n{done}{image}\n\n{item['question']} Reply "
                  '{"answer": "yes"} or {"answer": "no"}.')
        schema = {"type": "object", "properties": {"answer": {"enum": ["yes", "no"]}},
                  "required": ["answer"]}
        try:
            return str(self._ask(prompt, schema)["answer"]).lower() == "yes"
        except LLMError:
            return None

    def diagnose(self, plan: TaskPlan, scene_text: str, item: dict[str, Any]) -> str:
        """Prompt for the label of a failure, given the plan and the rollout log."""
        options = list(EXECUTION_FAULTS if item["kind"] == "execution" else PLANNING_FAULTS)
        log = json.dumps(item["log"], indent=None)[:2500]
        prompt = (f"Task: {plan.spec.description}\n\n{scene_text}\n\nPlan executed: "
                  f"{item['plan']}\nRollout log (per step: ok, error, reason, telemetry):\n{log}"
                  f"\n\nThe task failed. Which {item['kind']} error caused it? Choose one of "
                  f"{options}. Reply {{\"label\": \"...\"}}.")
        schema = {"type": "object", "properties": {"label": {"enum": options}},
                  "required": ["label"]}
        try:
            return str(self._ask(prompt, schema)["label"])
        except LLMError:
            return ""


def make_agent(spec: str, out: Path, llm_cache: str | Path | None = None,
               max_tokens: int = 384, seed: int = 0) -> Agent:
    """The agent for a ``--planner`` spec.

    Args:
        spec: ``oracle``, ``fault:<kind>``, ``llamacpp[:model]``, ``openai[:model]`` or
            ``replay[:backend:model]``.
        out: The run folder (log and default cache live there).
        llm_cache: Replay cache folder (default ``out/llm_cache``).
        max_tokens: LLM token budget per reply.
        seed: LLM sampling seed.

    Raises:
        ValueError: Unknown spec (the message lists the valid ones).
    """
    if spec == "oracle":
        return OracleAgent()
    if spec.startswith("fault:"):
        return FaultAgent(spec.partition(":")[2])
    backend = spec.partition(":")[0]
    cache = Path(llm_cache) if llm_cache else out / "llm_cache"
    log = out / "llm_log.jsonl"
    if backend in ("llamacpp", "openai"):
        client = make_client(spec, cache_dir=cache, mode="auto", log=log)
    elif backend == "replay":
        inner = spec.partition(":")[2] or "llamacpp:qwen2.5-coder-1.5b"
        client = make_client(inner, cache_dir=cache, mode="replay", log=log)
    else:
        raise ValueError(f"unknown planner {spec!r}; use oracle, fault:<kind>, "
                         "llamacpp[:model], openai[:model] or replay[:backend:model]")
    return LLMAgent(client, max_tokens=max_tokens, seed=seed)
