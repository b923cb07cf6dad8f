"""LLM judges: VERGSA's plan check and EQA-RM's structured episode judgement.

Both take any client object with ``complete(messages, *, temperature, max_tokens, seed,
json_schema)`` returning an object with ``.text`` (or a string): the clients of
:mod:`simjudge.llm` (llama.cpp, OpenAI-compatible, the replay cache, the scripted
client of tests) fit. Judges never import the task layer, so the client is injected.

Test-time scaling (EQA-RM): ``k`` samples with distinct seeds (``seed``, ``seed + 1`` …)
at ``temperature`` (default 0 for k = 1, 0.8 otherwise), invalid replies dropped, the rest
aggregated by ``mean`` or ``vote``; per-sample scores and their spread are in the details.

Pickling drops the client (a loaded model or a socket does not travel to worker
processes); set ``judge.client`` again after unpickling. ``clone()`` and ``deepcopy``
share the client.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..base import Judge
from ..context import JudgeContext
from ..episode import EpisodeRecord
from ..signals import FAILURE, SUCCESS, UNDECIDED, JudgeSignal
from .parse import (
    SUPPORTED_AGGREGATES,
    AggregateScore,
    ParsedScore,
    aggregate_scores,
    parse_episode_score,
    parse_plan_score,
)
from .prompts import EPISODE_SCHEMA, PLAN_SCHEMA, PROMPT_VERSION, episode_messages, plan_messages

__all__ = ["LLMEpisodeJudge", "LLMPlanJudge"]

_NO_CLIENT = (
    "{judge} needs an LLM client: pass client=... — e.g. "
    "make_judge('{name}', client=make_client('llamacpp:smollm2-135m')) with "
    "`from simjudge.llm import make_client`, or any object with "
    ".complete(messages, temperature=, max_tokens=, seed=, json_schema=)"
)
_DROPPED = (
    "{judge} has no client: clients are not pickled (a judge copied to another process "
    "loses it); set judge.client = make_client(...) before judging"
)
_REPLY_CHARS = 600
"""Replies are kept in details up to this many characters."""


class _LLMJudge(Judge):
    """Shared machinery: client checks, K-sample scaling, aggregation."""

    provides_potential = False
    max_reward = 1.0
    _transient = ("client",)
    _step = 1.0

    def __init__(
        self,
        client: Any = None,
        k: int = 1,
        temperature: float | None = None,
        aggregate: str = "mean",
        max_tokens: int = 256,
        seed: int = 0,
        json_mode: bool = False,
    ) -> None:
        super().__init__()
        if client is None:
            raise ValueError(_NO_CLIENT.format(judge=type(self).__name__, name=self.name))
        if not callable(getattr(client, "complete", None)):
            raise TypeError(
                f"{type(self).__name__}: client must have a .complete(messages, ...) method, "
                f"got {type(client).__name__}"
            )
        if int(k) < 1:
            raise ValueError(f"k (samples per judgement) must be >= 1, got {k}")
        if aggregate not in SUPPORTED_AGGREGATES:
            raise ValueError(f"aggregate={aggregate!r} is not supported; use one of "
                             f"{list(SUPPORTED_AGGREGATES)}")
        temperature = (0.0 if int(k) == 1 else 0.8) if temperature is None else float(temperature)
        if not 0.0 <= temperature <= 2.0:
            raise ValueError(f"temperature must be in [0, 2], got {temperature}")
        self.client = client
        self.k = int(k)
        self.temperature = temperature
        self.aggregate = aggregate
        self.max_tokens = int(max_tokens)
        self.seed = int(seed)
        self.json_mode = bool(json_mode)

    def __deepcopy__(self, memo: dict[int, Any]) -> _LLMJudge:
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        for key, value in self.__dict__.items():
            new.__dict__[key] = value if key == "client" else copy.deepcopy(value, memo)
        return new

    @property
    def model(self) -> str:
        """The client's model name (``describe()``/``model`` if it has one)."""
        return str(getattr(self.client, "model", type(self.client).__name__))

    def sample(
        self,
        messages: Sequence[Mapping[str, str]],
        parse: Callable[[str], ParsedScore],
        schema: Mapping[str, Any] | None = None,
    ) -> tuple[list[ParsedScore], list[str]]:
        """Ask ``k`` times (seeds ``seed`` … ``seed + k - 1``); parse every reply.

        ``schema`` is passed as ``json_schema`` in ``json_mode`` (None otherwise).
        """
        if self.client is None:
            raise RuntimeError(_DROPPED.format(judge=self.label))
        parsed, replies = [], []
        for i in range(self.k):
            reply = self.client.complete(
                list(messages),
                temperature=self.temperature,
                max_tokens=self.max_tokens,
                seed=self.seed + i,
                json_schema=schema if self.json_mode else None,
            )
            text = reply if isinstance(reply, str) else str(getattr(reply, "text", reply))
            replies.append(text)
            parsed.append(parse(text))
        return parsed, replies

    def _details(
        self, agg: AggregateScore, parsed: Sequence[ParsedScore], replies: Sequence[str]
    ) -> dict[str, Any]:
        return {
            "score": agg.score,
            "samples": list(agg.samples),
            "valid": agg.n_valid,
            "invalid": len(parsed) - agg.n_valid,
            "spread": agg.spread,
            "format_ok": [p.format_ok for p in parsed],
            "parsed_by": [p.how for p in parsed],
            "replies": [r[:_REPLY_CHARS] for r in replies],
            "k": self.k,
            "aggregate": self.aggregate,
            "temperature": self.temperature,
            "model": self.model,
            "json_mode": self.json_mode,
            "prompt_version": PROMPT_VERSION,
        }


class LLMPlanJudge(_LLMJudge):
    """VERGSA's LLM-as-a-judge: one subtask's code in its task context → 1 / 0 / 0.5.

    The prompt (:func:`~simjudge.judges.llm.prompts.plan_messages`) lists the checks of the
    paper: primitive subtasks missing ``rgbs, final_state`` or ``success``; reward subtasks
    missing components or success, badly weighted; names not in the articulation tree;
    APIs outside the allowed list; grammatical or logical errors. Replies are parsed
    tolerantly (:func:`~simjudge.judges.llm.parse.parse_plan_score`).

    ``judge_plan(kind, code, context)`` returns ``reward`` = the aggregated score (0.5
    when no reply was valid), no Φ, verdict ``success`` (≥ 0.75), ``failure`` (≤ 0.25) or
    ``undecided``. Details: ``score`` (float | None), ``samples`` (list[float | None]),
    ``valid`` / ``invalid`` (int), ``spread`` (float), ``format_ok`` (list[bool]),
    ``parsed_by`` (list[str]), ``replies`` (list[str], truncated), ``k``, ``aggregate``,
    ``temperature``, ``model``, ``prompt_version``.

    Example:
        >>> from simjudge.llm import ScriptedClient
        >>> judge = LLMPlanJudge(ScriptedClient(["Score: 0"]))
        >>> judge.judge_plan("primitive", "success = True", JudgeContext()).verdict
        'failure'

    Args:
        client: The LLM client (required).
        k: Samples per judgement.
        temperature: Sampling temperature (default 0 for k = 1, else 0.8).
        aggregate: ``mean`` or ``vote``.
        max_tokens: Reply budget per sample.
        seed: Seed of the first sample (sample i uses ``seed + i``).
        json_mode: Ask for ``{"score": …}`` JSON and pass
            :data:`~simjudge.judges.llm.prompts.PLAN_SCHEMA` (constrained decoding on llama.cpp).
    """

    name = "llm-plan"
    _step = 0.5

    def __init__(
        self,
        client: Any = None,
        k: int = 1,
        temperature: float | None = None,
        aggregate: str = "mean",
        max_tokens: int = 64,
        seed: int = 0,
        json_mode: bool = False,
    ) -> None:
        super().__init__(client, k, temperature, aggregate, max_tokens, seed, json_mode)

    def _judge_plan(self, kind: str, code: str, context: JudgeContext) -> JudgeSignal:
        messages = plan_messages(kind, code, context, self.json_mode)
        parsed, replies = self.sample(messages, parse_plan_score, PLAN_SCHEMA)
        agg = aggregate_scores([p.score for p in parsed], self.aggregate, self._step)
        details = self._details(agg, parsed, replies)
        if agg.score is None:
            reason = f"no parseable 1/0/0.5 in {self.k} repl{'y' if self.k == 1 else 'ies'}"
            return JudgeSignal(0.5, None, UNDECIDED, reason, details)
        score = agg.score
        verdict = SUCCESS if score >= 0.75 else FAILURE if score <= 0.25 else UNDECIDED
        spread = f" ± {agg.spread:.2f}" if self.k > 1 else ""
        reason = f"LLM plan score {score:g}{spread} ({agg.n_valid}/{self.k} valid)"
        return JudgeSignal(score, None, verdict, reason, details)


class LLMEpisodeJudge(_LLMJudge):
    """EQA-RM's generative judge: a recorded episode → critique and a 0–10 score.

    The prompt (:func:`~simjudge.judges.llm.prompts.episode_messages`) shows the task, its
    target (``context.extra["target"]``), joint ranges, the claimed outcome
    (``record.outcome["claimed"]`` or a default claim of success), the gripper events and
    ``keyframes`` state summaries subsampled from the record's per-step ``state`` (the
    privileged summary ``info["state"]``: gripper position, suction, held part, joints).
    Replies are parsed tolerantly (:func:`~simjudge.judges.llm.parse.parse_episode_score`):
    missing tags, ``Score: 7/10``, out-of-range values clipped, no score → invalid.

    ``judge_episode(record)`` returns Φ = reward = aggregated score / 10 (None and 0 when
    no reply was valid), verdict ``success`` (score ≥ 7), ``failure`` (≤ 3) or
    ``undecided``. Details as :class:`LLMPlanJudge` plus ``critiques`` (list[str]) and
    ``clipped`` (list[bool]).

    Example:
        >>> from simjudge.llm import ScriptedClient
        >>> judge = LLMEpisodeJudge(ScriptedClient(["<critique>ok</critique><score>8</score>"]))
        >>> judge.judge_episode(EpisodeRecord()).phi
        0.8

    Args:
        client: The LLM client (required).
        k: Samples per judgement (EQA-RM: 1 … 32).
        temperature: Sampling temperature (default 0 for k = 1, else 0.8).
        aggregate: ``mean`` or ``vote``.
        keyframes: Keyframes N shown (EQA-RM: 5).
        max_tokens: Reply budget per sample.
        seed: Seed of the first sample.
        json_mode: Ask for ``{"critique", "score"}`` JSON and pass
            :data:`~simjudge.judges.llm.prompts.EPISODE_SCHEMA` — small local models (SmolLM2,
            Qwen 1.5B) follow a grammar far more reliably than the tag format.
    """

    name = "llm-episode"

    def __init__(
        self,
        client: Any = None,
        k: int = 1,
        temperature: float | None = None,
        aggregate: str = "mean",
        keyframes: int = 5,
        max_tokens: int = 256,
        seed: int = 0,
        json_mode: bool = False,
    ) -> None:
        super().__init__(client, k, temperature, aggregate, max_tokens, seed, json_mode)
        if int(keyframes) < 1:
            raise ValueError(f"keyframes must be >= 1, got {keyframes}")
        self.keyframes = int(keyframes)

    def messages(self, record: EpisodeRecord) -> list[dict[str, str]]:
        """The prompt for ``record`` (exposed so benchmarks can log or cache it)."""
        claim = (record.outcome or {}).get("claimed")
        states = [s.state for s in record.steps]
        return episode_messages(states, record.context or {}, claim, self.keyframes,
                                self.json_mode)

    def _judge_episode(self, record: EpisodeRecord) -> JudgeSignal:
        parsed, replies = self.sample(self.messages(record), parse_episode_score, EPISODE_SCHEMA)
        agg = aggregate_scores([p.score for p in parsed], self.aggregate, self._step)
        details = self._details(agg, parsed, replies)
        details["critiques"] = [p.critique[:_REPLY_CHARS] for p in parsed]
        details["clipped"] = [p.clipped for p in parsed]
        if agg.score is None:
            reason = f"no parseable 0-10 score in {self.k} repl{'y' if self.k == 1 else 'ies'}"
            return JudgeSignal(0.0, None, UNDECIDED, reason, details)
        phi = agg.score / 10.0
        verdict = SUCCESS if agg.score >= 7.0 else FAILURE if agg.score <= 3.0 else UNDECIDED
        spread = f" ± {agg.spread:.2f}" if self.k > 1 else ""
        reason = f"LLM episode score {agg.score:.3g}/10{spread} ({agg.n_valid}/{self.k} valid)"
        return JudgeSignal(phi, phi, verdict, reason, details)
