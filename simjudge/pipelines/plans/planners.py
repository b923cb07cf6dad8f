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

from simjudge.llm import LLMClient, LLMError, complete_structured, make_client
from simjudge.llm.openai_http import image_message

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

    def plan(self, plan: TaskPlan, scene_text: str,
             image: str | None = None) -> PlanAnswer:  # pragma: no cover
        """Q1: a plan for the task (``image``: a PNG of the initial scene, if rendered)."""
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

    def plan(self, plan: TaskPlan, scene_text: str, image: str | None = None) -> PlanAnswer:
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
        kind: One of :data:`~simjudge.pipelines.plans.faults.PLANNING_FAULTS`.
    """

    def __init__(self, kind: str) -> None:
        if kind not in PLANNING_FAULTS:
            raise ValueError(f"unknown planning fault {kind!r}; use fault:<kind> with kind in "
                             f"{list(PLANNING_FAULTS)}")
        self.kind = kind
        self.name = f"fault:{kind}"

    def plan(self, plan: TaskPlan, scene_text: str, image: str | None = None) -> PlanAnswer:
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


_NEXT_STEP_TOKENS = 64
_YES_NO_TOKENS = 16
_LABEL_TOKENS = 32
_LOG_CHARS = 1800


def _system() -> str:
    """The system message: the role and the skill vocabulary, the same for every task.

    Every prompt starts with it and each task's questions then share the task's context, so
    llama.cpp evaluates only what follows the longest prefix it already holds.
    """
    return f"{_SYSTEM}\nSkills (each step is skill(object[, parameter])):\n{skills_text()}"


def _context(plan: TaskPlan, scene_text: str) -> str:
    """The prompt prefix every question of one task shares."""
    return f"Task: {plan.spec.description}\n\n{scene_text}\n\n"


def _short(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 3)
    if isinstance(value, dict):
        return {k: _short(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_short(v) for v in value]
    return value


def compact_log(log: list[dict[str, Any]], limit: int = _LOG_CHARS) -> str:
    """A rollout log as short JSON lines (floats to 3 decimals, at most ``limit`` chars)."""
    lines = []
    for record in log:
        row = {k: _short(v) for k, v in record.items() if k in ("step", "ok", "error", "telemetry")}
        row["reason"] = str(record.get("reason", ""))[:100]
        lines.append(json.dumps(row, separators=(",", ":")))
    return "\n".join(lines)[:limit]


class LLMAgent(Agent):
    """An LLM answering through any :class:`~simjudge.llm.LLMClient`.

    Args:
        client: The client (cached and logged by :func:`make_agent`).
        max_tokens: Token budget per reply.
        seed: Sampling seed.
        images: Send each question's rendered PNG (the initial scene for Q1, the real state
            for Q2 and Q3) as an ``image_url`` content part, for multimodal models.
    """

    def __init__(self, client: LLMClient, max_tokens: int = 384, seed: int = 0,
                 images: bool = False) -> None:
        self.client = client
        self.max_tokens = int(max_tokens)
        self.seed = int(seed)
        self.images = bool(images)
        self.name = f"{client.backend}:{client.model}"

    def describe(self) -> dict[str, Any]:
        """The client's description."""
        return {"agent": self.name, "client": self.client.describe(), "images": self.images}

    def _ask(self, prompt: str, schema: dict[str, Any], max_tokens: int | None = None,
             image: str | None = None) -> Any:
        user: dict[str, Any] = {"role": "user", "content": prompt}
        if self.images and image:
            user = image_message(f"{prompt}\n\nThe image shows the scene now (exterior camera).",
                                 [Path(image)])
        messages = [{"role": "system", "content": _system()}, user]
        budget = self.max_tokens if max_tokens is None else min(self.max_tokens, max_tokens)
        value, _ = complete_structured(self.client, messages, schema, retries=1,
                                       max_tokens=budget, seed=self.seed)
        return value

    def plan(self, plan: TaskPlan, scene_text: str, image: str | None = None) -> PlanAnswer:
        """Prompt for a plan (with the initial scene's image when images are on); validate it."""
        prompt = (f"{_context(plan, scene_text)}"
                  "Write the plan as JSON like this example from another task:\n"
                  f"{_EXAMPLE}\nEach step is skill(object[, parameter]) using the object names "
                  "above.")
        try:
            value = self._ask(prompt, PLAN_JSON_SCHEMA, image=image)
            return PlanAnswer(parse_plan(value, source="LLM plan"))
        except (LLMError, PlanError) as exc:
            return PlanAnswer(None, f"{type(exc).__name__}: {str(exc)[:300]}")

    def next_step(self, plan: TaskPlan, scene_text: str, item: dict[str, Any]) -> str:
        """Prompt for the next step after the executed prefix."""
        done = "\n".join(f"{i + 1}. {s}" for i, s in enumerate(item["executed"])) or "(nothing yet)"
        prompt = (f"{_context(plan, scene_text)}Steps executed so far:\n{done}\n\n"
                  'What is the single next step? Reply {"next_step": "skill(object[, parameter])"}.')
        schema = {"type": "object", "properties": {"next_step": {"type": "string"}},
                  "required": ["next_step"]}
        try:
            return str(self._ask(prompt, schema, _NEXT_STEP_TOKENS, item.get("image"))["next_step"])
        except LLMError:
            return ""

    def state(self, plan: TaskPlan, scene_text: str, item: dict[str, Any]) -> bool | None:
        """Prompt a yes/no question about the state after the executed steps."""
        done = "\n".join(f"{i + 1}. {s}" for i, s in enumerate(item["executed"]))
        prompt = (f"{_context(plan, scene_text)}The robot tried these steps (some may have "
                  f"failed):\n{done}\n\n{item['question']} Reply {{\"answer\": \"yes\"}} or "
                  '{"answer": "no"}.')
        schema = {"type": "object", "properties": {"answer": {"enum": ["yes", "no"]}},
                  "required": ["answer"]}
        try:
            reply = self._ask(prompt, schema, _YES_NO_TOKENS, item.get("image"))
            return str(reply["answer"]).lower() == "yes"
        except LLMError:
            return None

    def diagnose(self, plan: TaskPlan, scene_text: str, item: dict[str, Any]) -> str:
        """Prompt for the label of a failure, given the plan and the rollout log."""
        options = list(EXECUTION_FAULTS if item["kind"] == "execution" else PLANNING_FAULTS)
        prompt = (f"{_context(plan, scene_text)}Plan executed: {item['plan']}\nRollout log "
                  f"(per step: ok, error, reason, telemetry):\n{compact_log(item['log'])}\n\n"
                  f"The task failed. Which {item['kind']} error caused it? Choose one of "
                  f"{options}. Reply {{\"label\": \"...\"}}.")
        schema = {"type": "object", "properties": {"label": {"enum": options}},
                  "required": ["label"]}
        try:
            return str(self._ask(prompt, schema, _LABEL_TOKENS)["label"])
        except LLMError:
            return ""


def make_agent(spec: str, out: Path, llm_cache: str | Path | None = None,
               max_tokens: int = 384, seed: int = 0, images: bool = False) -> Agent:
    """The agent for a ``--planner`` spec.

    Args:
        spec: ``oracle``, ``fault:<kind>``, ``llamacpp[:model]``, ``openai[:model]`` or
            ``replay[:backend:model]``.
        out: The run folder (log and default cache live there).
        llm_cache: Replay cache folder (default ``out/llm_cache``).
        max_tokens: LLM token budget per reply.
        seed: LLM sampling seed.
        images: Send rendered frames to the model (``openai`` backends only).

    Raises:
        ValueError: Unknown spec, or images asked of a text-only backend (the message
            lists the valid choices).
    """
    if spec == "oracle":
        return OracleAgent()
    if spec.startswith("fault:"):
        return FaultAgent(spec.partition(":")[2])
    backend = spec.partition(":")[0]
    cache = Path(llm_cache) if llm_cache else out / "llm_cache"
    log = out / "llm_log.jsonl"
    if backend in ("llamacpp", "openai"):
        inner, mode = spec, "auto"
    elif backend == "replay":
        inner, mode = spec.partition(":")[2] or "llamacpp:qwen2.5-coder-1.5b", "replay"
    else:
        raise ValueError(f"unknown planner {spec!r}; use oracle, fault:<kind>, "
                         "llamacpp[:model], openai[:model] or replay[:backend:model]")
    if images and inner.partition(":")[0] != "openai":
        raise ValueError(f"--images sends PNG frames to a multimodal model over an "
                         f"OpenAI-compatible server; planner {spec!r} is text-only: use "
                         "--planner openai:<model> (or replay:openai:<model>) or drop --images")
    client = make_client(inner, cache_dir=cache, mode=mode, log=log)
    return LLMAgent(client, max_tokens=max_tokens, seed=seed, images=images)
