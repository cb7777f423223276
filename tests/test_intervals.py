"""Comparison statistics against scipy, hand-computed values and rliable's definitions."""

import math

import numpy as np
import pytest
from scipy import stats

from voidrl.io.report import run_measures
from voidrl.math.intervals import (
    Interval, difference_interval, group_interval, iqm, iqm_difference, iqm_interval, ratio_interval, t_interval,
    two_level_difference, two_level_interval, verdict, welch_difference,
)


def test_t_interval_matches_scipy_and_the_hand_formula():
    values = np.array([1.0, 2.0, 4.0])
    mean, low, high = t_interval(values)
    assert mean == pytest.approx(7 / 3)
    assert high - mean == pytest.approx(4.3027 * np.std(values, ddof=1) / math.sqrt(3), rel=1e-4)
    expected = stats.t.interval(0.95, 2, loc=values.mean(), scale=stats.sem(values))
    assert (low, high) == pytest.approx(expected)


def test_welch_difference_matches_hand_computation_and_scipy():
    a, b = np.array([1.0, 2.0, 3.0]), np.array([2.0, 4.0, 6.0])
    difference, low, high = welch_difference(a, b)
    assert difference == -2.0
    # variances of the means 1/3 and 4/3; Welch-Satterthwaite dof (5/3)^2 / ((1/3)^2/2 + (4/3)^2/2) = 50/17
    half = stats.t.ppf(0.975, 50 / 17) * math.sqrt(5 / 3)
    assert (low, high) == pytest.approx((-2.0 - half, -2.0 + half))
    rng = np.random.default_rng(0)
    a, b = rng.normal(3.0, 1.0, 7), rng.normal(1.0, 3.0, 4)
    reference = stats.ttest_ind(a, b, equal_var=False).confidence_interval(0.95)
    assert welch_difference(a, b)[1:] == pytest.approx((reference.low, reference.high))


def test_degenerate_groups():
    assert math.isnan(t_interval(np.array([5.0])).low)
    assert math.isnan(welch_difference(np.array([1.0]), np.array([1.0, 2.0])).high)
    assert welch_difference(np.array([2.0, 2.0]), np.array([1.0, 1.0])) == (1.0, 1.0, 1.0)


def test_interquartile_mean_is_the_25_percent_trimmed_mean():
    values = np.array([100.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, -50.0])
    assert iqm(values) == pytest.approx(stats.trim_mean(values, 0.25)) and iqm(values) == pytest.approx(3.5)


def test_bootstrap_intervals_cover_their_estimate_and_separate_clear_gains():
    rng = np.random.default_rng(1)
    better, worse = rng.normal(10.0, 1.0, 6), rng.normal(5.0, 1.0, 6)
    np.random.seed(7)
    estimate, low, high = iqm_interval(better, reps=500)
    assert np.random.randint(1 << 30) == np.random.RandomState(7).randint(1 << 30)  # the global generator is left alone
    assert estimate == pytest.approx(iqm(better)) and better.min() <= low <= estimate <= high <= better.max()
    assert iqm_interval(better, reps=500) == iqm_interval(better, reps=500)  # seeded: the same interval every time
    gain = iqm_difference(better, worse, reps=500)
    assert gain.estimate == pytest.approx(iqm(better) - iqm(worse)) and gain.low > 0
    noise = iqm_difference(rng.normal(0.0, 1.0, 6), rng.normal(0.0, 1.0, 6), reps=500)
    assert noise.low < 0 < noise.high


def test_five_seeds_switch_to_rliable():
    four, five = np.arange(4.0), np.arange(5.0)
    assert group_interval(four) == t_interval(four)
    assert group_interval(five) == iqm_interval(five)
    assert group_interval(five, four) == t_interval(five)  # compared with 4 seeds: the mean, as Welch's difference
    assert group_interval(five, five + 1) == iqm_interval(five)
    assert difference_interval(four, five) == welch_difference(four, five)
    assert difference_interval(five, five + 1) == iqm_difference(five, five + 1)


@pytest.mark.parametrize("interval, expected", [
    (Interval(1.0, 0.1, 2.0), "helped"), (Interval(-1.0, -2.0, -0.5), "hurt"),
    (Interval(0.5, -0.1, 1.0), "within noise"), (Interval(0.5, math.nan, math.nan), "too few seeds to tell"),
])
def test_verdict(interval, expected):
    assert verdict(interval) == expected


def test_run_measures_by_hand(tmp_path):
    # episodes end at steps 10, 20, ..., 100 with returns 1..10; window 2
    rows = "\n".join(f"{10 * i},{i},5" for i in range(1, 11))
    (tmp_path / "episodes.csv").write_text(f"step,return,length\n{rows}\n")
    measures = run_measures(tmp_path, total_steps=100, window=2, points=10)
    assert measures["final"] == 9.5
    # grid 10, 20, ..., 100: trailing means 1, 1.5, 2.5, ..., 9.5
    assert measures["auc"] == pytest.approx(np.mean([1.0, *(i - 0.5 for i in range(2, 11))]))
    assert measures["at_10%"] == 1.0 and measures["at_25%"] == 1.5  # at step 25 the latest episode ended at 20
    # a budget of 55 steps measures only the episodes finished by then, as if the run had stopped there
    measures = run_measures(tmp_path, total_steps=55, window=2, points=11)
    assert measures["final"] == 4.5  # episodes ending at 40 and 50
    assert math.isnan(measures["at_10%"]) and measures["at_25%"] == 1.0  # no episode by 5.5; by 13.75 the first


def test_two_level_bootstrap_gives_no_interval_below_three_parents():
    interval = two_level_interval([np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0, 6.0])])
    assert interval.estimate == pytest.approx(iqm(np.arange(1.0, 7.0)))
    assert math.isnan(interval.low) and math.isnan(interval.high)
    assert math.isnan(two_level_difference([np.ones(3)] * 5, [np.ones(1)] * 2).low)
    assert math.isnan(ratio_interval(np.ones(2), np.ones(5)).low)


def test_two_level_bootstrap_of_identical_values_has_no_width():
    assert two_level_interval([np.full(4, 7.0)] * 3) == Interval(7.0, 7.0, 7.0)
    assert two_level_difference([np.full(3, 5.0)] * 4, [np.full(1, 2.0)] * 5) == Interval(3.0, 3.0, 3.0)


def test_iqm_by_hand():
    # eight values, sorted -50, 1, 2, 3, 4, 5, 6, 100: the middle four are 2, 3, 4 and 5
    assert iqm(np.array([100.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, -50.0])) == pytest.approx(3.5)


def test_a_parent_effect_widens_the_two_level_interval_beyond_the_pooled_one():
    generator = np.random.default_rng(0)
    parents = [offset + generator.normal(0.0, 1.0, 5) for offset in (0.0, 10.0, -10.0, 5.0)]
    nested = two_level_interval(parents, statistic=np.mean)
    pooled = two_level_interval([np.array([value]) for value in np.concatenate(parents)], statistic=np.mean)
    assert nested.estimate == pytest.approx(pooled.estimate)
    assert nested.high - nested.low > 1.5 * (pooled.high - pooled.low)


def test_one_child_per_parent_is_rliables_bootstrap():
    values = np.random.default_rng(1).normal(0.0, 1.0, 12)
    ours = two_level_interval([np.array([value]) for value in values], reps=5_000)
    theirs = iqm_interval(values, reps=5_000)
    assert ours.estimate == pytest.approx(theirs.estimate)
    width = theirs.high - theirs.low
    assert ours.low == pytest.approx(theirs.low, abs=0.05 * width) and ours.high == pytest.approx(theirs.high, abs=0.05 * width)


def test_ratio_interval_resamples_the_denominator_too():
    generator = np.random.default_rng(2)
    numerator, denominator = generator.normal(150.0, 20.0, 30), generator.normal(100.0, 20.0, 30)
    ratio = ratio_interval(numerator, denominator)
    assert ratio.estimate == pytest.approx(numerator.mean() / denominator.mean())
    exact_denominator = t_interval(numerator)
    assert (ratio.high - ratio.low) > 1.2 * (exact_denominator.high - exact_denominator.low) / denominator.mean()
    assert ratio.low < ratio.estimate < ratio.high
