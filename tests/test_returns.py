"""GAE and discounted returns against a slow per-element reference and hand-computed cases."""

import pytest
import torch

from voidrl.math import (
    discounted_returns, discounted_running_sums, episode_sums, episode_start_values, generalized_advantage_estimate,
)


def slow_gae(rewards, values, next_values, terminated, truncated, gamma, lam):
    """Textbook GAE, one environment and one step at a time, in python floats."""
    T, N = rewards.shape
    advantages = torch.zeros(T, N, dtype=torch.float64)
    for n in range(N):
        following = 0.0
        for t in reversed(range(T)):
            bootstrap = 0.0 if terminated[t, n] else float(next_values[t, n])
            delta = float(rewards[t, n]) + gamma * bootstrap - float(values[t, n])
            episode_ends_here = bool(terminated[t, n] or truncated[t, n]) or t == T - 1
            following = delta + (0.0 if episode_ends_here else gamma * lam * following)
            advantages[t, n] = following
    return advantages


def slow_discounted(rewards, next_values, terminated, truncated, gamma):
    T, N = rewards.shape
    out = torch.zeros(T, N, dtype=torch.float64)
    for n in range(N):
        following = None
        for t in reversed(range(T)):
            if terminated[t, n]:
                following = float(rewards[t, n])
            elif truncated[t, n] or t == T - 1:
                following = float(rewards[t, n]) + gamma * float(next_values[t, n])
            else:
                following = float(rewards[t, n]) + gamma * following
            out[t, n] = following
    return out


def random_rollout(T=37, N=5, seed=0):
    g = torch.Generator().manual_seed(seed)
    rewards = torch.randn(T, N, generator=g, dtype=torch.float64)
    values = torch.randn(T, N, generator=g, dtype=torch.float64)
    next_values = torch.randn(T, N, generator=g, dtype=torch.float64)
    terminated = torch.rand(T, N, generator=g) < 0.1
    truncated = (torch.rand(T, N, generator=g) < 0.1) & ~terminated
    truncated[3, 0] = True  # and one step that is both: termination wins
    terminated[3, 0] = True
    return rewards, values, next_values, terminated, truncated


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("gamma,lam", [(0.99, 0.95), (0.9, 1.0), (0.5, 0.0)])
def test_gae_matches_slow_reference(seed, gamma, lam):
    r, v, nv, term, trunc = random_rollout(seed=seed)
    adv, ret = generalized_advantage_estimate(r, v, nv, term, trunc, gamma, lam)
    expected = slow_gae(r, v, nv, term, trunc, gamma, lam)
    torch.testing.assert_close(adv, expected)
    torch.testing.assert_close(ret, expected + v)


@pytest.mark.parametrize("seed", range(5))
def test_discounted_returns_match_slow_reference(seed):
    r, _, nv, term, trunc = random_rollout(seed=seed)
    out = discounted_returns(r, nv, term, trunc, 0.97)
    torch.testing.assert_close(out, slow_discounted(r, nv, term, trunc, 0.97))


def test_gae_hand_computed_termination_truncation_and_cut():
    gamma, lam = 0.5, 0.5
    # one env, 4 steps: step 1 terminates, step 2 is truncated (bootstrap 4.0), step 3 is a rollout cut.
    rewards = torch.tensor([[1.0], [2.0], [3.0], [4.0]])
    values = torch.tensor([[0.5], [1.0], [1.5], [2.0]])
    next_values = torch.tensor([[1.0], [99.0], [4.0], [6.0]])
    terminated = torch.tensor([[False], [True], [False], [False]])
    truncated = torch.tensor([[False], [False], [True], [False]])
    adv, _ = generalized_advantage_estimate(rewards, values, next_values, terminated, truncated, gamma, lam)
    d3 = 4.0 + 0.5 * 6.0 - 2.0          # cut: bootstrapped, recursion ends
    d2 = 3.0 + 0.5 * 4.0 - 1.5          # truncated: bootstrapped with the final obs' value
    d1 = 2.0 + 0.0 - 1.0                # terminated: no bootstrap (99 is ignored)
    d0 = 1.0 + 0.5 * 1.0 - 0.5
    expected = torch.tensor([[d0 + 0.25 * d1], [d1], [d2], [d3]])
    torch.testing.assert_close(adv, expected)


def test_gae_does_not_leak_across_episode_boundaries():
    """Changing rewards after an episode end leaves the advantages before it untouched."""
    r, v, nv, term, trunc = random_rollout(T=10, N=1, seed=3)
    term[:] = False
    trunc[:] = False
    term[4, 0] = True
    adv, _ = generalized_advantage_estimate(r, v, nv, term, trunc, 0.99, 0.95)
    r2 = r.clone()
    r2[5:] += 100.0
    adv2, _ = generalized_advantage_estimate(r2, v, nv, term, trunc, 0.99, 0.95)
    torch.testing.assert_close(adv[:5], adv2[:5])
    assert not torch.allclose(adv[5:], adv2[5:])


def test_splitting_a_rollout_at_a_cut_does_not_change_gae():
    """Two halves, the first bootstrapped with the second's first value, equal the whole (TorchRL's invariant)."""
    r, v, nv, term, trunc = random_rollout(T=20, N=3, seed=7)
    nv[:-1] = torch.where(term[:-1] | trunc[:-1], nv[:-1], v[1:])  # a consistent rollout
    whole, _ = generalized_advantage_estimate(r, v, nv, term, trunc, 0.99, 1.0)
    first, _ = generalized_advantage_estimate(r[:8], v[:8], nv[:8], term[:8], trunc[:8], 0.99, 1.0)
    second, _ = generalized_advantage_estimate(r[8:], v[8:], nv[8:], term[8:], trunc[8:], 0.99, 1.0)
    torch.testing.assert_close(second, whole[8:])
    # the first half differs only by the missing tail: with lambda = 1 it is the whole minus the discounted tail
    # beyond the cut, so compare on steps that end within the half.
    ends = (term[:8] | trunc[:8]).flip(0).cumsum(0).flip(0) > 0
    torch.testing.assert_close(first[ends], whole[:8][ends])


def test_infinite_horizon_constant_reward_converges_to_geometric_value():
    """SB3's test_infinite_horizon: reward 1 forever, cut every T steps, V = 1/(1-gamma) is a fixed point."""
    gamma = 0.9
    value = 1.0 / (1.0 - gamma)
    T = 50
    r = torch.ones(T, 1)
    v = torch.full((T, 1), value)
    nv = torch.full((T, 1), value)
    no = torch.zeros(T, 1, dtype=torch.bool)
    adv, ret = generalized_advantage_estimate(r, v, nv, no, no, gamma, 0.95)
    torch.testing.assert_close(adv, torch.zeros(T, 1), atol=1e-4, rtol=0)
    torch.testing.assert_close(ret, v, atol=1e-4, rtol=0)


def test_timeout_is_bootstrapped_but_termination_is_not():
    """SB3-style timeout test: the same reward sequence, truncated vs terminated at the last step."""
    r = torch.ones(3, 1)
    nv = torch.full((3, 1), 10.0)
    term = torch.tensor([[False], [False], [True]])
    trunc = torch.tensor([[False], [False], [False]])
    terminated_returns = discounted_returns(r, nv, term, trunc, 1.0)
    truncated_returns = discounted_returns(r, nv, trunc, term, 1.0)
    assert terminated_returns[:, 0].tolist() == [3.0, 2.0, 1.0]
    assert truncated_returns[:, 0].tolist() == [13.0, 12.0, 11.0]


def test_episode_start_values_hand_computed():
    """env 0: an episode ends (terminated) at t=1, the next is truncated at t=3, a third is cut by the
    rollout's end; env 1 never ends, so the rollout start is its only episode start."""
    values = torch.tensor([[1.0, 7.0], [2.0, 8.0], [3.0, 9.0], [4.0, 10.0], [5.0, 11.0], [6.0, 12.0]])
    terminated = torch.zeros(6, 2, dtype=torch.bool)
    truncated = torch.zeros(6, 2, dtype=torch.bool)
    terminated[1, 0] = True
    truncated[3, 0] = True
    out = episode_start_values(values, terminated, truncated)
    assert out[:, 0].tolist() == [1.0, 1.0, 3.0, 3.0, 5.0, 5.0]
    assert out[:, 1].tolist() == [7.0] * 6


def test_discounted_running_sums_carry_across_rollouts_and_episodes():
    rewards = torch.tensor([[1.0, 0.0], [2.0, 1.0], [0.0, 1.0]])
    sums = discounted_running_sums(rewards, torch.tensor([10.0, 0.0]), 0.5)
    torch.testing.assert_close(sums, torch.tensor([[6.0, 0.0], [5.0, 1.0], [2.5, 1.5]]))
    whole = discounted_running_sums(torch.cat([rewards, rewards]), torch.tensor([10.0, 0.0]), 0.5)
    torch.testing.assert_close(whole[3:], discounted_running_sums(rewards, sums[-1], 0.5))


def test_episode_sums_close_episodes_at_their_ends_and_carry_the_rest_across_rollouts():
    rewards = torch.tensor([[1.0, 10.0], [2.0, 20.0], [3.0, 30.0]])
    ends = torch.tensor([[False, True], [True, False], [False, False]])
    finished, running = episode_sums(rewards, ends, torch.tensor([100.0, 0.0]))
    # env 1's episode ends at t = 0 (10), env 0's at t = 1 (100 carried + 1 + 2); then 3 and 20 + 30 run on
    assert finished.tolist() == [10.0, 103.0] and running.tolist() == [3.0, 50.0]
    none, unchanged = episode_sums(torch.zeros(2, 2), torch.zeros(2, 2, dtype=torch.bool), running)
    assert none.numel() == 0 and unchanged.tolist() == [3.0, 50.0]


def test_episode_sums_match_a_loop_over_each_environment():
    generator = torch.Generator().manual_seed(0)
    rewards = torch.rand(40, 5, generator=generator)
    ends = torch.rand(40, 5, generator=generator) < 0.2
    start = torch.rand(5, generator=generator)
    finished, running = episode_sums(rewards, ends, start)
    expected, carried = [], start.tolist()
    for t in range(40):
        for n in range(5):
            carried[n] += rewards[t, n].item()
            if ends[t, n]:
                expected.append(carried[n])
                carried[n] = 0.0
    assert torch.allclose(finished, torch.tensor(expected)) and torch.allclose(running, torch.tensor(carried))
