"""simjudge.pipelines.arena: double-blind pairwise A/B evaluation of policies, as in RoboArena.

* :mod:`~simjudge.pipelines.arena.store`: the SQLite database (``arena.sqlite``): policies,
  planned matches (blind view), the sealed handle key, verdicts; idempotent, resumable,
  safe for several processes.
* :mod:`~simjudge.pipelines.arena.sampling`: pair sampling toward under-evaluated policies,
  random sides, opaque handles.
* :mod:`~simjudge.pipelines.arena.match`: one match, both sides from the same seed and snapshot.
* :mod:`~simjudge.pipelines.arena.evaluator`: progress 0–100, preference with the tie rule,
  templated reason.
* :mod:`~simjudge.pipelines.arena.run`: :func:`run_arena` and :func:`rank_arena`.
* :mod:`~simjudge.pipelines.arena.rank`: every ranking model with bootstrap intervals.
* :mod:`~simjudge.pipelines.arena.oracle` and :mod:`~simjudge.pipelines.arena.validate`: the
  exhaustive simulator oracle and the validation of every model against it.

The ranking models themselves are in :mod:`simjudge.judges.metrics.rankings`.
"""

from __future__ import annotations

from .config import ArenaRankConfig, ArenaRunConfig, ArenaValidateConfig
from .evaluator import SideSignals, TieRule, Verdict, judge_match
from .match import check_evaluator, play_match
from .oracle import OracleScores, oracle_cell, oracle_scores, run_oracle
from .rank import MODELS, compute_rankings, format_rankings
from .run import load_comparisons, play_arena, rank_arena, run_arena
from .sampling import sample_match, sampling_weight
from .store import DB_FILE, ArenaStore, BlindMatch, MatchResult, PlannedMatch
from .validate import validate_arena, validate_comparisons

__all__ = [
    "ArenaRankConfig",
    "ArenaRunConfig",
    "ArenaValidateConfig",
    "DB_FILE",
    "MODELS",
    "ArenaStore",
    "BlindMatch",
    "MatchResult",
    "OracleScores",
    "PlannedMatch",
    "SideSignals",
    "TieRule",
    "Verdict",
    "check_evaluator",
    "compute_rankings",
    "format_rankings",
    "judge_match",
    "load_comparisons",
    "oracle_cell",
    "oracle_scores",
    "play_match",
    "rank_arena",
    "play_arena",
    "run_arena",
    "run_oracle",
    "sample_match",
    "sampling_weight",
    "validate_arena",
    "validate_comparisons",
]
