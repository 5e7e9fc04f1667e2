"""Shared test data: the lesson's toy distributions, in float and exact form."""

from fractions import Fraction as F

TOY_P = [0.6, 0.3, 0.1]
TOY_Q = [0.2, 0.3, 0.5]
TOY_P_EXACT = [F(3, 5), F(3, 10), F(1, 10)]
TOY_Q_EXACT = [F(1, 5), F(3, 10), F(1, 2)]
