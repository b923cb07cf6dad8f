"""Learned judges that read no privileged state (issue 10): ``obs-progress``, ``image-progress``."""

from .image_judge import DEFAULT_IMAGE_WEIGHTS, ImageProgressJudge
from .obs_judge import DEFAULT_WEIGHTS, ObsProgressJudge

__all__ = ["DEFAULT_IMAGE_WEIGHTS", "DEFAULT_WEIGHTS", "ImageProgressJudge", "ObsProgressJudge"]
