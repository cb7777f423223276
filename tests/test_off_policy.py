"""Value rescaling, n-step double-Q and Retrace targets, DQfD's large-margin loss, R2D2's weighted TD loss and sequence
priorities against slow references (Python floats, one element at a time) and hand-computed cases."""

import math

import pytest
import torch

from voidrl.math import (
    discounted_returns,
    double_q_bootstrap,
    inverse_value_rescale,
    large_margin_loss,
    n_step_targets,
    prioritised_td_loss,
    retrace_targets,
    retrace_traces,
    sequence_priorities,
    value_rescale,
)


def h(x, eps):
    return math.copysign(math.sqrt(abs(x) + 1.0) - 1.0, x) + eps * x


def h_inverse_by_bisection(y, eps):
    """h is strictly increasing: find h(x) = y without the closed form."""
    low, high = -1e12, 1e12
    for _ in range(200):
        middle = (low + high) / 2
        low, high = (middle, high) if h(middle, eps) < y else (low, middle)
    return (low + high) / 2


def episodes(T=23, B=4, A=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    rewards = torch.randn(T, B, generator=g, dtype=torch.float64)
    terminated = torch.rand(T, B, generator=g) < 0.1
    truncated = (torch.rand(T, B, generator=g) < 0.1) & ~terminated
    terminated[2, 0] = truncated[2, 0] = True  # both: termination wins
    q = torch.randn(T, B, A, generator=g, dtype=torch.float64)
    next_q = torch.randn(T, B, A, generator=g, dtype=torch.float64)
    continuing = ~(terminated | truncated)
    next_q[:-1][continuing[:-1]] = q[1:][continuing[:-1]]  # s'_t is s_{t+1} unless the episode ended
    actions = torch.randint(A, (T, B), generator=g)
    policy = torch.softmax(torch.randn(T, B, A, generator=g, dtype=torch.float64), dim=-1)
    next_policy = torch.softmax(torch.randn(T, B, A, generator=g, dtype=torch.float64), dim=-1)
    next_policy[:-1][continuing[:-1]] = policy[1:][continuing[:-1]]
    return rewards, terminated, truncated, q, next_q, actions, next_policy


# --- value rescaling ---------------------------------------------------------------------------

def test_value_rescale_hand_computed():
    x = torch.tensor([0.0, 3.0, -8.0, 99.0], dtype=torch.float64)
    expected = torch.tensor([0.0, 1.0 + 3e-3, -2.0 - 8e-3, 9.0 + 99e-3], dtype=torch.float64)
    torch.testing.assert_close(value_rescale(x, 1e-3), expected)


@pytest.mark.parametrize("eps", [1e-3, 1e-2])
def test_inverse_is_exact_over_a_wide_range(eps):
    x = torch.cat([-torch.logspace(-6, 6, 500, dtype=torch.float64), torch.zeros(1, dtype=torch.float64),
                   torch.logspace(-6, 6, 500, dtype=torch.float64)])
    torch.testing.assert_close(value_rescale(inverse_value_rescale(x, eps), eps), x, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(inverse_value_rescale(value_rescale(x, eps), eps), x, rtol=1e-5, atol=1e-5)
    bounded = x[x.abs() <= 1e3]
    by_bisection = torch.tensor([h_inverse_by_bisection(float(y), eps) for y in bounded], dtype=torch.float64)
    torch.testing.assert_close(inverse_value_rescale(bounded, eps), by_bisection, rtol=1e-7, atol=1e-7)


def test_inverse_in_float32_over_the_range_of_game_scores():
    x = torch.linspace(-1e5, 1e5, 20001)
    torch.testing.assert_close(value_rescale(inverse_value_rescale(x)), x, rtol=1e-5, atol=1e-4)


# --- n-step double Q ---------------------------------------------------------------------------

def slow_n_step(rewards, next_values, terminated, truncated, gamma, n):
    T, B = rewards.shape
    out = torch.zeros(T, B, dtype=torch.float64)
    for b in range(B):
        for t in range(T):
            total, k = 0.0, t
            while True:
                total += gamma ** (k - t) * float(rewards[k, b])
                if terminated[k, b]:
                    break
                if truncated[k, b] or k == T - 1 or k - t == n - 1:
                    total += gamma ** (k - t + 1) * float(next_values[k, b])
                    break
                k += 1
            out[t, b] = total
    return out


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("n", [1, 3, 5, 40])
def test_n_step_targets_match_slow_reference(seed, n):
    rewards, terminated, truncated, _, next_q, _, _ = episodes(seed=seed)
    next_values = next_q[..., 0]
    targets = n_step_targets(rewards, next_values, terminated, truncated, 0.97, n)
    assert targets.dtype == torch.float64
    # float64 throughout: gamma must not pass through float32 anywhere (it did in the bootstrap term, ~2e-7 off)
    torch.testing.assert_close(targets, slow_n_step(rewards, next_values, terminated, truncated, 0.97, n), rtol=1e-13, atol=1e-13)


def test_n_step_longer_than_the_sequence_is_the_bootstrapped_discounted_return():
    rewards, terminated, truncated, _, next_q, _, _ = episodes(seed=7)
    next_values = next_q[..., 1]
    torch.testing.assert_close(n_step_targets(rewards, next_values, terminated, truncated, 0.9, 1000),
                               discounted_returns(rewards, next_values, terminated, truncated, 0.9))


def test_n_step_hand_computed_with_termination_and_truncation():
    # One sequence: steps 0, 1 (terminated), 2, 3 (truncated), 4 (sequence end); n = 2, gamma = 0.5.
    rewards = torch.tensor([[1.0], [2.0], [3.0], [4.0], [5.0]])
    next_values = torch.tensor([[10.0], [20.0], [30.0], [40.0], [50.0]])
    terminated = torch.tensor([[False], [True], [False], [False], [False]])
    truncated = torch.tensor([[False], [False], [False], [True], [False]])
    expected = torch.tensor([[1 + 0.5 * 2], [2.0], [3 + 0.5 * 4 + 0.25 * 40], [4 + 0.5 * 40], [5 + 0.5 * 50]])
    torch.testing.assert_close(n_step_targets(rewards, next_values, terminated, truncated, 0.5, 2), expected)


def test_rescaled_n_step_hand_computed():
    # h(1 + h^-1(h(3))) = h(4) = sqrt(5) - 1 + 4 eps
    target = n_step_targets(torch.tensor([[1.0]], dtype=torch.float64), value_rescale(torch.tensor([[3.0]], dtype=torch.float64)),
                            torch.tensor([[False]]), torch.tensor([[False]]), 1.0, 5, rescale_eps=1e-3)
    assert target.item() == pytest.approx(math.sqrt(5) - 1 + 4e-3, abs=1e-12)


def test_double_q_bootstrap_takes_the_target_value_of_the_online_argmax():
    online = torch.tensor([[1.0, 5.0, 2.0], [0.0, -1.0, 3.0]])
    target = torch.tensor([[7.0, -2.0, 9.0], [4.0, 8.0, 6.0]])
    torch.testing.assert_close(double_q_bootstrap(online, target), torch.tensor([-2.0, 6.0]))


def test_n_step_rejects_n_below_one():
    with pytest.raises(ValueError, match="n must be a positive integer"):
        n_step_targets(torch.zeros(2, 1), torch.zeros(2, 1), torch.zeros(2, 1, dtype=torch.bool),
                       torch.zeros(2, 1, dtype=torch.bool), 0.9, 0)


# --- Retrace -----------------------------------------------------------------------------------

def slow_retrace(rewards, taken_q, next_q, next_policy, traces, terminated, truncated, gamma):
    """Munos et al.'s sum form: Q_ret(s_t, a_t) = Q(s_t, a_t) + sum_{s>=t} gamma^(s-t) (prod_{i=t+1..s} c_i) delta_s,
    delta_s = r_s + gamma E_pi Q(s'_s, .) - Q(s_s, a_s), the sum stopping at the episode's or the sequence's end."""
    T, B = rewards.shape
    out = torch.zeros(T, B, dtype=torch.float64)
    for b in range(B):
        for t in range(T):
            total, weight = float(taken_q[t, b]), 1.0
            for s in range(t, T):
                if s > t:
                    weight *= gamma * float(traces[s, b])
                expected = 0.0 if terminated[s, b] else sum(float(next_policy[s, b, a] * next_q[s, b, a]) for a in range(next_q.shape[-1]))
                total += weight * (float(rewards[s, b]) + gamma * expected - float(taken_q[s, b]))
                if terminated[s, b] or truncated[s, b]:
                    break
            out[t, b] = total
    return out


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("trace_lambda", [0.0, 0.95, 1.0])
def test_retrace_matches_the_sum_form(seed, trace_lambda):
    rewards, terminated, truncated, q, next_q, actions, next_policy = episodes(seed=seed)
    g = torch.Generator().manual_seed(100 + seed)
    behaviour = torch.rand(actions.shape, generator=g, dtype=torch.float64) * 0.9 + 0.1
    target = torch.rand(actions.shape, generator=g, dtype=torch.float64)
    traces = retrace_traces(target, behaviour, trace_lambda)
    taken_q = q.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
    targets = retrace_targets(rewards, taken_q, next_q, next_policy, traces, terminated, truncated, 0.97)
    expected = slow_retrace(rewards, taken_q, next_q, next_policy, traces, terminated, truncated, 0.97)
    torch.testing.assert_close(targets, expected)


def test_transformed_retrace_runs_the_recursion_on_the_raw_values():
    rewards, terminated, truncated, q, next_q, actions, next_policy = episodes(seed=3)
    squashed_q, squashed_next = value_rescale(q * 50), value_rescale(next_q * 50)
    traces = torch.full(actions.shape, 0.9, dtype=torch.float64)
    taken = squashed_q.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
    targets = retrace_targets(rewards, taken, squashed_next, next_policy, traces, terminated, truncated, 0.99, rescale_eps=1e-3)
    raw = slow_retrace(rewards, inverse_value_rescale(taken), inverse_value_rescale(squashed_next), next_policy, traces,
                       terminated, truncated, 0.99)
    torch.testing.assert_close(targets, value_rescale(raw))


def test_retrace_on_policy_with_lambda_one_is_the_n_step_return():
    # pi = mu, both greedy on the taken actions: c = 1 and E_pi Q(s') = Q(s', a'), so the corrections
    # telescope into the discounted return up to the episode's or the sequence's end.
    rewards, terminated, truncated, q, next_q, actions, _ = episodes(seed=5)
    one_hot = torch.nn.functional.one_hot(actions, q.shape[-1]).to(torch.float64)
    next_policy = torch.zeros_like(one_hot)
    next_policy[:-1], next_policy[-1, :, 0] = one_hot[1:], 1.0
    cut = truncated.clone()
    cut[-1] = True
    next_policy[cut & ~terminated] = 1.0 / q.shape[-1]  # any policy at a cut: its expectation is the bootstrap
    taken_q = q.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
    traces = retrace_traces(torch.ones_like(rewards), torch.ones_like(rewards), 1.0)
    targets = retrace_targets(rewards, taken_q, next_q, next_policy, traces, terminated, truncated, 0.95)
    next_values = (next_policy * next_q).sum(-1)
    torch.testing.assert_close(targets, n_step_targets(rewards, next_values, terminated, truncated, 0.95, rewards.shape[0]))


def test_retrace_with_zero_traces_is_expected_sarsa():
    rewards, terminated, truncated, q, next_q, actions, next_policy = episodes(seed=6)
    taken_q = q.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
    targets = retrace_targets(rewards, taken_q, next_q, next_policy, torch.zeros_like(rewards), terminated, truncated, 0.9)
    expected = rewards + 0.9 * (~terminated) * (next_policy * next_q).sum(-1)
    torch.testing.assert_close(targets, expected)


def test_traces_are_truncated_importance_ratios():
    traces = retrace_traces(torch.tensor([0.8, 0.2, 0.5]), torch.tensor([0.4, 0.4, 0.5]), 0.95)
    torch.testing.assert_close(traces, torch.tensor([0.95, 0.475, 0.95]))


# --- DQfD's large-margin loss -----------------------------------------------------------------

def test_large_margin_loss_hand_computed():
    q = torch.tensor([[1.0, 2.0, 0.5], [3.0, 1.0, 2.5], [0.0, 0.0, 0.0]])
    demonstrated = torch.tensor([0, 0, 2])
    # a_E = 0 trails action 1 by 1: max(1, 2 + 0.8, 0.5 + 0.8) - 1; a_E = 0 leads by 0.5 < 0.8: max(3, 1.8, 3.3) - 3;
    # a tie: the margin itself
    torch.testing.assert_close(large_margin_loss(q, demonstrated, 0.8), torch.tensor([1.8, 0.3, 0.8]))
    leading = torch.tensor([[5.0, 1.0, 4.0]])
    assert large_margin_loss(leading, torch.tensor([0]), 0.8).item() == 0.0  # leads every action by the margin or more


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_large_margin_loss_matches_slow_reference(seed):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(5, 3, 6, generator=g, dtype=torch.float64)
    demonstrated = torch.randint(6, (5, 3), generator=g)
    margin = 0.3 + seed * 0.4
    expected = torch.empty(5, 3, dtype=torch.float64)
    for t in range(5):
        for b in range(3):
            a_e = int(demonstrated[t, b])
            expected[t, b] = max(float(q[t, b, a]) + (0.0 if a == a_e else margin) for a in range(6)) - float(q[t, b, a_e])
    got = large_margin_loss(q, demonstrated, margin)
    torch.testing.assert_close(got, expected)
    assert (got >= 0).all()


# --- priorities --------------------------------------------------------------------------------

def test_sequence_priorities_hand_computed():
    deltas = torch.tensor([[1.0, 0.5], [-3.0, 0.5], [2.0, -4.0]])
    mask = torch.tensor([[True, False], [True, True], [True, True]])
    priorities = sequence_priorities(deltas, mask, eta=0.9)
    torch.testing.assert_close(priorities, torch.tensor([0.9 * 3 + 0.1 * 2, 0.9 * 4 + 0.1 * 2.25]))
    masked_out = mask.clone()
    masked_out[1, 0] = False
    assert sequence_priorities(deltas, masked_out)[0].item() == pytest.approx(0.9 * 2 + 0.1 * 1.5)


def test_sequence_priorities_need_a_step_per_sequence():
    with pytest.raises(ValueError, match="at least one step"):
        sequence_priorities(torch.ones(3, 2), torch.tensor([[True, False]] * 3))


def test_prioritised_td_loss_hand_computed():
    # two steps, two sequences, one head; step 1 of sequence 1 is not trained (burn-in or padding)
    td = torch.tensor([[[1.0], [2.0]], [[3.0], [10.0]]])
    trained = torch.tensor([[True, True], [True, False]])
    weights = torch.tensor([0.5, 1.0])
    # 1/2 (0.5 * 1 + 1.0 * 4 + 0.5 * 9) / 3 trained steps
    assert prioritised_td_loss(td, trained, weights).item() == pytest.approx(0.5 * (0.5 + 4.0 + 4.5) / 3)


def test_prioritised_td_loss_against_a_slow_reference():
    generator = torch.Generator().manual_seed(3)
    td = torch.randn(5, 4, 2, generator=generator, dtype=torch.float64)
    trained = torch.rand(5, 4, generator=generator) < 0.7
    weights = torch.rand(4, generator=generator, dtype=torch.float64)
    total, count = 0.0, 0
    for t in range(5):
        for b in range(4):
            if trained[t, b]:
                count += 1
                total += sum(float(weights[b]) * float(td[t, b, h]) ** 2 for h in range(2))
    assert prioritised_td_loss(td, trained, weights).item() == pytest.approx(0.5 * total / count, rel=1e-12)
