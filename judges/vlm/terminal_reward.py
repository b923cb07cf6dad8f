"""The terminal-reward adapter: an episode judge's score as the reward of the terminal step.

Episode judges (``image-episode``, ``llm-episode``) score a whole episode; RL needs a
reward per step. :class:`TerminalReward` is a live judge that records the episode as it
runs (actions, the env's ``info["state"]`` and ``info["progress"]``, and the rendered
frames when the episode judge needs them) and, on the step that ends the episode
(terminated or truncated), asks the episode judge once: reward = ``scale`` × the episode
judge's reward (``image-episode``: score / 10), verdict = its verdict. Every earlier step
gives reward 0 and verdict ``undecided``. It has no Φ, so
:class:`~simjudge.judges.JudgeReward` adds no shaping: wrap it as
``JudgeReward(env, TerminalReward(judge), mode="dense")`` (the env needs
``render_mode="rgb_array"`` for image judges). A time limit must be inside the judge
wrapper (SimEnv's own ``horizon`` is), or the judge never sees the episode end.

Details: ``terminal`` (bool), ``steps`` (recorded so far), ``episode`` (the episode
judge's signal as a dict on the terminal step, else None).
"""

from __future__ import annotations

from typing import Any

from ..base import Judge
from ..context import JudgeContext
from ..episode import StepRecord
from ..signals import UNDECIDED, JudgeSignal, Transition
from .episode import FramedEpisodeRecord
from .images import shrink

__all__ = ["TerminalReward", "make_terminal_reward"]

_PENDING = JudgeSignal()


class TerminalReward(Judge):
    """Give ``episode_judge``'s score as the terminal step's reward, 0 before (module doc).

    Args:
        episode_judge: A judge with ``judge_episode`` (``image-episode``, ``llm-episode``).
        scale: Multiplies the episode judge's reward.
        claimed: The claimed outcome shown to the episode judge (None: its default claim).
    """

    name = "terminal-reward"
    provides_potential = False

    def __init__(
        self, episode_judge: Judge, scale: float = 1.0, claimed: str | None = None
    ) -> None:
        super().__init__()
        if "judge_episode" not in episode_judge.supported():
            raise TypeError(
                f"TerminalReward needs an episode judge (one with judge_episode), got "
                f"{episode_judge.label}, which supports {list(episode_judge.supported())}"
            )
        self.episode_judge = episode_judge
        self.scale = float(scale)
        self.claimed = claimed
        inner = episode_judge.max_reward
        self.max_reward = None if inner is None else abs(self.scale) * inner
        self._record = FramedEpisodeRecord()

    @property
    def needs_frames(self) -> bool:  # type: ignore[override]
        """Whether the episode judge reads frames (then the wrapper renders every step)."""
        return bool(self.episode_judge.needs_frames)

    def _reset(self, context: JudgeContext) -> None:
        self._record = FramedEpisodeRecord(
            task_name=context.task_name, context=context.to_dict(),
            outcome={"claimed": self.claimed} if self.claimed else {},
        )

    def _observe(self, transition: Transition) -> JudgeSignal:
        record = self._record
        info = transition.info or {}
        action = None if transition.action is None else [float(a) for a in transition.action]
        record.steps.append(StepRecord(
            step=transition.step, signal=_PENDING, action=action,
            env_reward=None if transition.is_reset else float(transition.reward),
            terminated=bool(transition.terminated), truncated=bool(transition.truncated),
            progress=info.get("progress"), env_success=info.get("success"),
            state=info.get("state"),
        ))
        if self.needs_frames:
            size = getattr(self.episode_judge, "size", None)
            record.frames.append(shrink(transition.frame, size))
        done = transition.terminated or transition.truncated
        if not done:
            return JudgeSignal(0.0, None, UNDECIDED, "episode not finished: reward 0 until its "
                               "last step", {"terminal": False, "steps": len(record.steps) - 1,
                                             "episode": None})
        record.outcome.update(steps=len(record.steps) - 1,
                              terminated=bool(transition.terminated),
                              truncated=bool(transition.truncated))
        signal = self.episode_judge.judge_episode(record)
        reward = self.scale * signal.reward
        return JudgeSignal(reward, None, signal.verdict,
                           f"terminal reward {reward:.3g}: {signal.reason}",
                           {"terminal": True, "steps": len(record.steps) - 1,
                            "episode": signal.to_dict()})

    def close(self) -> None:
        """Close the episode judge."""
        self.episode_judge.close()


def make_terminal_reward(
    episode: str = "image-episode", scale: float = 1.0, claimed: str | None = None,
    client: Any = None,
) -> TerminalReward:
    """Registry factory: ``terminal-reward:episode='image-episode'`` (``client`` passed on)."""
    from ..registry import make_judge

    inner = make_judge(episode, client=client) if client is not None else make_judge(episode)
    return TerminalReward(inner, scale=scale, claimed=claimed)
