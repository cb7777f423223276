"""The prioritised replay's sum tree against a cumulative-sum reference and sampling statistics."""

import numpy as np
import pytest
from scipy import stats

from voidrl.replay import SumTree, importance_weights


def filled_tree(capacity, seed):
    rng = np.random.default_rng(seed)
    tree = SumTree(capacity)
    priorities = np.zeros(capacity)
    for _ in range(20):  # overlapping batches, with repeats inside a batch: the last value wins
        slots = rng.integers(capacity, size=17)
        values = rng.random(17) ** 3
        tree.update(slots, values)
        for slot, value in zip(slots, values):
            priorities[slot] = value
    return tree, priorities


@pytest.mark.parametrize("capacity", [1, 5, 64, 100])
def test_total_and_leaves_follow_every_update(capacity):
    tree, priorities = filled_tree(capacity, seed=capacity)
    np.testing.assert_allclose(tree.priorities(np.arange(capacity)), priorities)
    assert tree.total == pytest.approx(priorities.sum())


@pytest.mark.parametrize("seed", range(3))
def test_find_matches_a_cumulative_sum_search(seed):
    tree, priorities = filled_tree(100, seed)
    values = np.random.default_rng(seed).random(1000) * priorities.sum()
    expected = np.searchsorted(np.cumsum(priorities), values, side="right")
    np.testing.assert_array_equal(tree.find(values), expected)


@pytest.mark.parametrize("seed", range(3))
def test_sampling_frequencies_follow_the_priorities(seed):
    tree = SumTree(50)
    priorities = np.random.default_rng(seed).random(50) + 0.05
    tree.update(np.arange(50), priorities)
    rng = np.random.default_rng(1000 + seed)
    counts = np.bincount(np.concatenate([tree.sample(64, rng) for _ in range(1500)]), minlength=50)
    expected = priorities / priorities.sum() * counts.sum()
    assert stats.chisquare(counts, expected).pvalue > 1e-3


def test_empty_slots_are_never_sampled():
    tree = SumTree(37)
    tree.update(np.arange(0, 37, 3), np.full(13, 1e-12))
    tree.update([10], [5.0])
    drawn = np.concatenate([tree.sample(128, np.random.default_rng(seed)) for seed in range(50)])
    assert set(drawn.tolist()) <= set(range(0, 37, 3)) | {10}


def test_a_draw_rounded_up_to_the_total_lands_on_the_last_full_slot():
    tree = SumTree(8)
    tree.update([1, 2, 3], [1.0, 1.0, 0.0])
    np.testing.assert_array_equal(tree.find(np.array([tree.total, 1.0, 0.999])), [2, 2, 1])


def test_sampling_an_empty_tree_is_an_error():
    with pytest.raises(ValueError, match="every priority is zero"):
        SumTree(4).sample(2, np.random.default_rng(0))


@pytest.mark.parametrize("slots,priorities,error,match", [
    ([4], [1.0], IndexError, r"slots must lie in \[0, 4\)"),
    ([0], [-1.0], ValueError, "finite and non-negative"),
    ([0], [float("nan")], ValueError, "finite and non-negative"),
    ([0, 1], [1.0], ValueError, "2 slots but 1 priorities"),
])
def test_bad_updates_are_refused(slots, priorities, error, match):
    with pytest.raises(error, match=match):
        SumTree(4).update(slots, priorities)


def test_state_round_trip_and_mismatch():
    tree, priorities = filled_tree(30, seed=4)
    restored = SumTree(30)
    restored.load_state_dict(tree.state_dict())
    assert restored.total == pytest.approx(tree.total)
    values = np.linspace(0, tree.total, 200, endpoint=False)
    np.testing.assert_array_equal(restored.find(values), tree.find(values))
    with pytest.raises(ValueError, match="holds 30 slots, this tree has 31"):
        SumTree(31).load_state_dict(tree.state_dict())


def test_importance_weights_hand_computed():
    np.testing.assert_allclose(importance_weights(np.array([0.5, 0.25, 0.125]), size=4, beta=1.0), [0.25, 0.5, 1.0])
    np.testing.assert_allclose(importance_weights(np.array([0.5, 0.125]), size=4, beta=0.5), [0.5, 1.0])
    np.testing.assert_allclose(importance_weights(np.array([0.5, 0.125]), size=4, beta=0.0), [1.0, 1.0])
