"""Tolerant parsing of VLM replies: progress 0-100 and A/B/tie preferences."""

from __future__ import annotations

import numpy as np
import pytest

from simjudge.judges.vlm import image_part, parse_preference, parse_progress, png_bytes
from simjudge.judges.vlm.images import VLMFrameError, decode_data_url, shrink


@pytest.mark.parametrize(
    ("text", "score", "how", "ok"),
    [
        ('{"progress": 40, "reason": "half open"}', 40.0, "json", True),
        ('Sure! ```json\n{"progress": 85, "reason": "nearly"}\n```', 85.0, "json", True),
        ('{"estimate": 20}', 20.0, "json", False),
        ('{"progress": 140, "reason": "x"}', 100.0, "json", False),
        ("Progress: 75%", 75.0, "labelled", False),
        ("progress is 3/10 because the drawer is closed", 30.0, "labelled", False),
        ("I would say about 60% done.", 60.0, "percent", False),
        ("roughly 4 out of 10", 40.0, "fraction", False),
        ("55", 55.0, "bare", False),
        ('{"progress": 0.45, "reason": "r"}', 0.45, "json", True),
    ],
)
def test_parse_progress(text, score, how, ok):
    parsed = parse_progress(text)
    assert (parsed.score, parsed.how, parsed.format_ok) == (score, how, ok)


@pytest.mark.parametrize("text", ["", "I cannot see the image.", "2.16.15 4:30:58 PM"])
def test_unreadable_progress_is_invalid_not_guessed(text):
    assert parse_progress(text).score is None


@pytest.mark.parametrize(
    ("text", "choice", "how"),
    [
        ('{"preference": "B", "reason": "B opened it"}', "B", "json"),
        ('{"winner": "Episode A"}', "A", "json"),
        ('{"preference": "tie", "reason": "same"}', "tie", "json"),
        ("Preference: B. It opened the drawer.", "B", "labelled"),
        ("Episode A made more progress than the other.", "A", "phrase"),
        ("They look equal to me.", "tie", "tie"),
        ("a", "A", "bare"),
    ],
)
def test_parse_preference(text, choice, how):
    parsed = parse_preference(text)
    assert (parsed.choice, parsed.how) == (choice, how)


@pytest.mark.parametrize("text", ["A is better and B is better", "no idea", ""])
def test_ambiguous_preference_is_invalid(text):
    assert parse_preference(text).choice is None


def test_images_are_exact_and_shrunk():
    frame = np.random.default_rng(0).integers(0, 255, (240, 320, 3), dtype=np.uint8)
    small = shrink(frame, 64)
    assert small.shape == (48, 64, 3)
    assert png_bytes(frame, 64) == png_bytes(frame.copy(), 64)  # equal pixels, equal bytes
    np.testing.assert_array_equal(decode_data_url(image_part(frame, 64)["image_url"]["url"]),
                                  small)
    assert shrink(np.ones((4, 4, 3), np.float32), None).max() == 255  # floats in [0, 1]
    with pytest.raises(VLMFrameError, match="RGB"):
        shrink(np.zeros((4, 4)), None)


@pytest.mark.parametrize("name", ["images", "parse", "preference", "step"])
def test_docstring_examples(name):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(f"simjudge.judges.vlm.{name}"))
    assert result.attempted > 0 and result.failed == 0
