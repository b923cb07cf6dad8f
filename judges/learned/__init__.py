"""Learned judges that read no privileged state (issue 10): ``obs-progress``."""

from .obs_judge import DEFAULT_WEIGHTS, ObsProgressJudge

__all__ = ["DEFAULT_WEIGHTS", "ObsProgressJudge"]
