"""Interval estimates over seeds, and the difference between two groups of seeds.

Few seeds (fewer than ``RLIABLE_MIN_SEEDS`` in a group or in any group it is compared with): the mean
with a Student-t interval, and the difference of means with Welch's interval (unequal variances). From
``RLIABLE_MIN_SEEDS`` seeds in every group: the interquartile mean with a stratified bootstrap interval
from ``rliable`` (Agarwal et al. 2021), and the difference of interquartile means with an independent
bootstrap of each group.
"""

from __future__ import annotations

import math
import warnings
from typing import NamedTuple

import numpy as np

from voidrl.extras import require

RLIABLE_MIN_SEEDS = 5
BOOTSTRAP_REPS = 2_000
"""Bootstrap resamples per interval (rliable's default; arch resamples in Python, ~1 ms each)."""


def t_quantile(probability: float, dof: float) -> float:
    """Student-t quantile (scipy is imported here, not at start-up: it adds about a second to every command; without
    the ``analysis`` extra, a ``MissingExtra``)."""
    return require("scipy.stats", "analysis", "a Student-t interval").t.ppf(probability, dof)


class Interval(NamedTuple):
    estimate: float
    low: float
    high: float


def t_interval(values: np.ndarray, confidence: float = 0.95) -> Interval:
    """Mean of ``values [n]`` and its Student-t interval (NaN bounds for one value)."""
    values = np.asarray(values, dtype=float)
    mean = float(values.mean())
    if len(values) < 2:
        return Interval(mean, math.nan, math.nan)
    half = t_quantile(0.5 + confidence / 2, len(values) - 1) * values.std(ddof=1) / math.sqrt(len(values))
    return Interval(mean, mean - half, mean + half)


def welch_difference(a: np.ndarray, b: np.ndarray, confidence: float = 0.95) -> Interval:
    """mean(a) - mean(b) and Welch's interval: variances not assumed equal, degrees of freedom by
    Welch-Satterthwaite. NaN bounds when a group has one value; zero-width when both have no spread."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    difference = float(a.mean() - b.mean())
    if len(a) < 2 or len(b) < 2:
        return Interval(difference, math.nan, math.nan)
    va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
    if va + vb == 0.0:
        return Interval(difference, difference, difference)
    dof = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
    half = t_quantile(0.5 + confidence / 2, dof) * math.sqrt(va + vb)
    return Interval(difference, difference - half, difference + half)


def iqm(values: np.ndarray) -> float:
    """Interquartile mean: the mean of the middle 50% of ``values`` (rliable's, over one task)."""
    from rliable import metrics

    return float(metrics.aggregate_iqm(np.asarray(values, dtype=float)[:, None]))


def iqm_interval(values: np.ndarray, reps: int = BOOTSTRAP_REPS, seed: int = 0, confidence: float = 0.95) -> Interval:
    """Interquartile mean of ``values [n]`` and rliable's stratified-bootstrap percentile interval."""
    from rliable import library, metrics

    scores = np.asarray(values, dtype=float)[:, None]
    point, interval = _seeded(seed, library.get_interval_estimates,
        {"x": scores}, lambda x: np.array([metrics.aggregate_iqm(x)]), reps=reps,
        confidence_interval_size=confidence)
    return Interval(float(point["x"][0]), float(interval["x"][0, 0]), float(interval["x"][1, 0]))


def iqm_difference(a: np.ndarray, b: np.ndarray, reps: int = BOOTSTRAP_REPS, seed: int = 0,
                   confidence: float = 0.95) -> Interval:
    """IQM(a) - IQM(b) with a percentile interval from rliable's independent bootstrap of each group."""
    from rliable import library, metrics

    pair = (np.asarray(a, dtype=float)[:, None], np.asarray(b, dtype=float)[:, None])
    point, interval = _seeded(seed, library.get_interval_estimates,
        {"x": pair}, lambda x, y: np.array([metrics.aggregate_iqm(x) - metrics.aggregate_iqm(y)]), reps=reps,
        confidence_interval_size=confidence)
    return Interval(float(point["x"][0]), float(interval["x"][0, 0]), float(interval["x"][1, 0]))


def _seeded(seed: int, function, *args, **kwargs):
    """Call rliable with numpy's global generator seeded (its resampling draws from it, whatever
    ``random_state`` says), then restore the generator; without arch's FutureWarning about the
    RandomState that rliable hands it."""
    saved = np.random.get_state()
    np.random.seed(seed)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "random_state is deprecated", FutureWarning)
            return function(*args, random_state=np.random.RandomState(seed), **kwargs)
    finally:
        np.random.set_state(saved)


def uses_rliable(*groups: np.ndarray) -> bool:
    return min(len(group) for group in groups) >= RLIABLE_MIN_SEEDS


def group_interval(values: np.ndarray, *compared: np.ndarray) -> Interval:
    """The group's aggregate with its 95% interval: IQM (rliable) when it and every group ``compared`` with
    it have 5 seeds, else mean and t-interval, so a table's cells use the statistic its difference uses."""
    return iqm_interval(values) if uses_rliable(values, *compared) else t_interval(values)


def difference_interval(a: np.ndarray, b: np.ndarray) -> Interval:
    """a - b with its 95% interval: difference of IQMs (rliable) from 5 seeds each, else Welch."""
    return iqm_difference(a, b) if uses_rliable(a, b) else welch_difference(a, b)


def verdict(difference: Interval) -> str:
    """Whether a pre-trained minus scratch difference shows a gain: its interval's sign, or no interval."""
    if math.isnan(difference.low):
        return "too few seeds to tell"
    if difference.low > 0:
        return "helped"
    if difference.high < 0:
        return "hurt"
    return "within noise"


MIN_INTERVAL_UNITS = 3
"""Fewer independent units than this (seeds, or parents where runs share one) get no interval: their values are shown."""


def percentile_interval(estimate: float, draws: np.ndarray, confidence: float) -> Interval:
    """``estimate`` with the percentile interval of its bootstrap ``draws [reps]``."""
    low, high = np.quantile(draws, [0.5 - confidence / 2, 0.5 + confidence / 2])
    return Interval(estimate, float(low), float(high))


def two_level_resample(groups: list[np.ndarray], generator: np.random.Generator) -> np.ndarray:
    """One two-level bootstrap resample of ``groups`` (each parent's children ``[m_i]``): as many parents drawn with
    replacement, then within each drawn parent as many children drawn with replacement, pooled."""
    parents = generator.integers(len(groups), size=len(groups))
    return np.concatenate([groups[p][generator.integers(len(groups[p]), size=len(groups[p]))] for p in parents])


def two_level_interval(groups: list[np.ndarray], statistic=iqm, reps: int = BOOTSTRAP_REPS, seed: int = 0,
                       confidence: float = 0.95) -> Interval:
    """``statistic`` of every child pooled, with a percentile interval from a two-level bootstrap (parents, then
    children within each parent). A parent with one child each is the ordinary bootstrap of the values. NaN bounds
    with fewer than ``MIN_INTERVAL_UNITS`` parents."""
    groups = [np.asarray(group, dtype=float) for group in groups]
    estimate = statistic(np.concatenate(groups))
    if len(groups) < MIN_INTERVAL_UNITS:
        return Interval(estimate, math.nan, math.nan)
    generator = np.random.default_rng(seed)
    return percentile_interval(estimate, np.array([statistic(two_level_resample(groups, generator)) for _ in range(reps)]), confidence)


def two_level_difference(a: list[np.ndarray], b: list[np.ndarray], statistic=iqm, reps: int = BOOTSTRAP_REPS,
                         seed: int = 0, confidence: float = 0.95) -> Interval:
    """``statistic(a) - statistic(b)`` of two arms' pooled children, each arm resampled on its own two levels
    (``two_level_resample``: a group per parent; runs with no shared parent are groups of one). NaN bounds where
    either arm has fewer than ``MIN_INTERVAL_UNITS`` parents."""
    a, b = ([np.asarray(group, dtype=float) for group in arm] for arm in (a, b))
    estimate = statistic(np.concatenate(a)) - statistic(np.concatenate(b))
    if min(len(a), len(b)) < MIN_INTERVAL_UNITS:
        return Interval(estimate, math.nan, math.nan)
    generator = np.random.default_rng(seed)
    draws = np.array([statistic(two_level_resample(a, generator)) - statistic(two_level_resample(b, generator))
                      for _ in range(reps)])
    return percentile_interval(estimate, draws, confidence)


def ratio_interval(numerator: np.ndarray, denominator: np.ndarray, reps: int = BOOTSTRAP_REPS, seed: int = 0,
                   confidence: float = 0.95) -> Interval:
    """mean(numerator) / mean(denominator) of two independent samples, with a percentile interval from resampling
    both in every draw (the denominator is a measurement too, not a constant). NaN bounds where either has fewer than
    ``MIN_INTERVAL_UNITS`` values."""
    numerator, denominator = np.asarray(numerator, dtype=float), np.asarray(denominator, dtype=float)
    estimate = float(numerator.mean() / denominator.mean())
    if min(len(numerator), len(denominator)) < MIN_INTERVAL_UNITS:
        return Interval(estimate, math.nan, math.nan)
    generator = np.random.default_rng(seed)
    draws = (numerator[generator.integers(len(numerator), size=(reps, len(numerator)))].mean(1)
             / denominator[generator.integers(len(denominator), size=(reps, len(denominator)))].mean(1))
    return percentile_interval(estimate, draws, confidence)
