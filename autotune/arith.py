"""Sums of floats that give the same bits on every Python.  Pure, imports nothing.

Since Python 3.12 the built-in sum() adds floats with compensated summation, so the same numbers
can sum to different bits on 3.11 and on 3.12 or later.  Predictions are compared bit for bit (a
batch of scenarios against each alone, a sweep's output across interpreters), so wherever floats
are added up the code uses ordered_sum: left to right, one rounding per addition, as sum() did up
to 3.11.  It works on plain numbers and on numpy arrays (elementwise) alike.
"""
from __future__ import annotations


def ordered_sum(values, start=0):
    """start + values[0] + values[1] + ..., added left to right."""
    acc = start
    for v in values:
        acc = acc + v
    return acc
