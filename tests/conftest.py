"""Shared fixtures: the lesson's toy distributions and a small prefix-dependent model pair."""

from fractions import Fraction as F

import numpy as np
import pytest

TOY_P = [0.6, 0.3, 0.1]
TOY_Q = [0.2, 0.3, 0.5]
TOY_P_EXACT = [F(3, 5), F(3, 10), F(1, 10)]
TOY_Q_EXACT = [F(1, 5), F(3, 10), F(1, 2)]


def _softmax(logits):
    z = np.exp(logits - np.max(logits))
    return z / z.sum()


def toy_target(prefix):
    """A 4-token target whose next-token law depends on the last token and the length."""
    last = prefix[-1] if prefix else 0
    return _softmax(np.array([1.0, 0.2, -0.5, 0.4]) * (1 + last) / 2 + 0.3 * len(prefix) * np.array([0, 1, 0, -1]))


def toy_draft(prefix):
    """A draft that disagrees with ``toy_target`` in a prefix-dependent way (α well below 1)."""
    last = prefix[-1] if prefix else 0
    return _softmax(np.array([-0.3, 0.8, 0.6, 0.0]) + 0.4 * last * np.array([1, 0, -1, 0]))


@pytest.fixture
def models():
    return toy_target, toy_draft
