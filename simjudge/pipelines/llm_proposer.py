"""LLMProposer and Completer: solutions written by a language model (VERGSA).

The prompt carries what the paper's proposer sees: the task name and
description, the object's articulation tree (links, joints, types, limits, one
semantic label per link), the relevant links/joints, the top-k exemplars from
the pool, the allowed APIs, the conventions (lower joint limit = closed) and
the output schema. Output is JSON validated against :class:`ProposalOutput`
(grammar-constrained where the backend supports it) with re-prompting on
validation errors; code fields are extracted (fences stripped, indentation
kept). Small models are weak: a candidate that never validates is recorded in
:attr:`LLMProposer.last_failures` (the loop turns it into a verdict), not raised.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from simjudge.envs.codegen import extract_code
from simjudge.llm import LLMClient, StructuredOutputError, complete_structured
from simjudge.llm.heartbeat import set_progress_label
from simjudge.tasks.spec import Solution, SolutionError

from .proposer import Exemplar, TaskRequest

__all__ = ["Completer", "LLMProposer", "ProposalOutput", "SYSTEM_PROMPT", "build_messages"]

SYSTEM_PROMPT = """\
You write subtask supervision for a simulated Franka Panda robot with a suction gripper.
A task is solved by an ordered list of subtasks; each starts where the previous ended.
Each subtask is either
- "primitive": motion-planning calls, written exactly like
    rgbs, final_state = grasp_object_link(self, "Object", "link_1")
    success = check_grasped(self, "Object", "link_1")
  (primitives: grasp_object(self, object_name), grasp_object_link(self, object_name,
  link_name), approach_object_link(self, object_name, link_name), release_grasp(self)),
  and it must assign `success`;
- "reward": a function learned with reinforcement learning, written exactly like
    def _compute_reward(self):
        ...
        return reward, success
  with an action_space of "delta-translation" or "normalized-direct-translation".
Reward and success code may call only: get_eef_pos(self) -> (position, orientation),
get_position(self, object_name), get_orientation(self, object_name),
get_link_state(self, object_name, link_name) -> link centre position,
get_joint_state(self, object_name, joint_name), get_joint_limit(self, object_name,
joint_name) -> (lower, upper), get_bounding_box(self, object_name),
get_bounding_box_link(self, object_name, link_name), in_bbox(self, position, low, high),
check_grasped(self, object_name, link_name=None), get_initial_joint_angle(self,
object_name, joint_name), numpy as np, math, and plain Python control flow. No imports,
no other attributes of self. A joint's lower limit is its closed / natural state.
Use only the object, link and joint names given in the task."""

_ACTION_SPACES = Literal["delta-translation", "normalized-direct-translation"]


# Length bounds are validators, not schema bounds: llama.cpp turns maxLength/maxItems
# into nested repetition rules, and a 4000-character bound made a grammar that crashed it.
_MAX_CODE, _MAX_NAME, _MAX_SUBTASKS = 4000, 200, 8


class _SubtaskOut(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1)
    kind: Literal["primitive", "reward"]
    code: str = Field(min_length=1)
    action_space: _ACTION_SPACES = "delta-translation"

    @field_validator("name", "code")
    @classmethod
    def _bounded(cls, value: str, info) -> str:
        limit = _MAX_CODE if info.field_name == "code" else _MAX_NAME
        if len(value) > limit:
            raise ValueError(f"{info.field_name} is {len(value)} characters; keep it under {limit}")
        return value


class _SceneOut(BaseModel):
    model_config = ConfigDict(extra="forbid")
    joint_init: dict[str, float] = Field(default_factory=dict)


class ProposalOutput(BaseModel):
    """The JSON a proposer LLM must return (its schema is sent with the prompt).

    Attributes:
        scene: Initial joint values of the main object, as fractions of each range.
        subtasks: Ordered subtasks.
    """

    model_config = ConfigDict(extra="forbid")
    scene: _SceneOut = Field(default_factory=_SceneOut)
    subtasks: list[_SubtaskOut] = Field(min_length=1)

    @field_validator("subtasks")
    @classmethod
    def _few(cls, value: list) -> list:
        if len(value) > _MAX_SUBTASKS:
            raise ValueError(f"{len(value)} subtasks; use at most {_MAX_SUBTASKS}")
        return value


def _exemplar_text(exemplars: Sequence[Exemplar]) -> str:
    blocks = []
    for i, ex in enumerate(exemplars, start=1):
        subtasks = [
            {"name": s.name, "kind": s.kind, "code": s.code, "action_space": s.action_space}
            for s in ex.solution.subtasks
        ]
        blocks.append(
            f"Example {i}: task {ex.task!r} ({ex.description})\n"
            + json.dumps({"subtasks": subtasks}, indent=1)
        )
    return "\n\n".join(blocks)


def build_messages(
    task: TaskRequest,
    exemplars: Sequence[Exemplar] = (),
    prefix: Solution | None = None,
    feedback: str = "",
) -> list[dict[str, str]]:
    """The chat messages for a proposal (or, with ``prefix``, a completion).

    ``feedback`` (repair rounds) reports how earlier candidates fared under independent
    verification; the model is asked to fix what failed.
    """
    parts = [task.prompt_text()]
    if exemplars:
        parts.append("Solved similar tasks:\n" + _exemplar_text(exemplars))
    if feedback:
        parts.append(
            "Earlier solutions were executed and checked against the task goal; they did not "
            "achieve it:\n" + feedback + "\nPropose a solution that fixes these problems."
        )
    if prefix is None:
        parts.append("Write the subtasks that solve the task.")
    else:
        done = [{"name": s.name, "kind": s.kind, "code": s.code} for s in prefix.subtasks]
        parts.append(
            "The first subtasks are already decided:\n"
            + json.dumps(done, indent=1)
            + "\nWrite ONLY the remaining subtasks that complete the task after them."
        )
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": "\n\n".join(parts)}]


class LLMProposer:
    """Candidate solutions from an LLM.

    Args:
        client: Any :class:`~simjudge.llm.LLMClient` (local, OpenAI-compatible,
            or behind the replay cache).
        temperature: Sampling temperature (candidates differ by seed).
        max_tokens: Token budget per attempt.
        retries: Re-prompts with the validation error per candidate.
    """

    name = "llm"

    def __init__(
        self, client: LLMClient, temperature: float = 0.7, max_tokens: int = 1024, retries: int = 2
    ) -> None:
        self.client = client
        self.temperature = float(temperature)
        self.max_tokens = int(max_tokens)
        self.retries = int(retries)
        self.last_failures: list[dict[str, Any]] = []

    def propose(
        self,
        task: TaskRequest,
        exemplars: Sequence[Exemplar] = (),
        n: int = 1,
        seed: int = 0,
        feedback: str = "",
    ) -> list[Solution]:
        """Up to ``n`` solutions; failures land in :attr:`last_failures`."""
        return self._generate(task, exemplars, n, seed, prefix=None, feedback=feedback)

    def _generate(
        self, task, exemplars, n, seed, prefix: Solution | None, feedback: str = ""
    ) -> list[Solution]:
        self.last_failures = []
        messages = build_messages(task, exemplars, prefix, feedback)
        from tqdm import tqdm

        solutions = []
        what = "propose" if prefix is None else "complete"
        for index in tqdm(range(n), desc=f"{what} ({n} candidates)", unit="candidate",
                          leave=False, disable=None):
            sample_seed = seed * 1000 + index
            set_progress_label(self.client, f"{what} candidate {index + 1}/{n}")
            try:
                output, attempts = complete_structured(
                    self.client, messages, ProposalOutput, retries=self.retries,
                    temperature=self.temperature, max_tokens=self.max_tokens, seed=sample_seed,
                )
                solution = self._to_solution(task, output, prefix, exemplars, index, sample_seed,
                                             len(attempts))
            except (StructuredOutputError, SolutionError) as exc:
                self.last_failures.append(
                    {"candidate": index, "seed": sample_seed, "error": type(exc).__name__,
                     "message": str(exc)}
                )
                continue
            solutions.append(solution)
        return solutions

    def _to_solution(self, task, output: ProposalOutput, prefix, exemplars, index, seed, attempts):
        scene = _scene_for(task, output.scene.joint_init)
        subtasks = [] if prefix is None else [s.model_dump() for s in prefix.subtasks]
        subtasks += [
            {"name": s.name, "kind": s.kind, "code": extract_code(s.code) or s.code,
             "action_space": s.action_space}
            for s in output.subtasks
        ]
        provenance = {
            "proposer": "llm" if prefix is None else "llm-completer",
            **self.client.describe(),
            "temperature": self.temperature,
            "seed": seed,
            "candidate": index,
            "attempts": attempts,
            "exemplars": [e.task for e in exemplars],
        }
        if prefix is not None:
            provenance["prefix_length"] = len(prefix.subtasks)
            provenance["prefix_of"] = prefix.provenance
        return Solution.parse(
            {"task": task.name, "description": task.description, "scene": scene,
             "subtasks": subtasks, "provenance": provenance}
        )


class Completer(LLMProposer):
    """Regenerates the rest of a solution from a prefix (MCTS-style completion labels)."""

    name = "llm-completer"

    def complete(
        self, task: TaskRequest, prefix: Solution, n: int = 1, seed: int = 0,
        exemplars: Sequence[Exemplar] = (),
    ) -> list[Solution]:
        """``n`` completions that keep ``prefix`` (scene and its subtasks) verbatim."""
        solutions = self._generate(task, exemplars, n, seed, prefix=prefix)
        return [s.model_copy(update={"scene": prefix.scene}) for s in solutions]


def _scene_for(task: TaskRequest, joint_init: dict[str, float]) -> dict:
    if task.builtin is not None:
        scene = task.builtin.scene.to_dict()
    else:
        scene = {"objects": [{"name": task.object_name, "asset": task.asset,
                              "center": [0.7, 0.5], "fixed": True}]}
    if joint_init:
        main = next(o for o in scene["objects"] if o["name"] == task.object_name)
        main["joint_init"] = {**(main.get("joint_init") or {}), **joint_init}
    return scene
