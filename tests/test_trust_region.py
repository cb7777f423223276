"""Conjugate gradient, Fisher-vector products and NPG / TRPO steps against explicit references."""

import math

import pytest
import torch
from torch.nn.utils import parameters_to_vector, vector_to_parameters

from voidrl.math import (
    backtracking_line_search,
    conjugate_gradient,
    fisher_vector_product,
    flat_gradient,
    max_kl_step,
    natural_gradient_step,
)

F64 = torch.float64


def _categorical_mean_kl(policy, observations, old_log_probs):
    log_probs = torch.log_softmax(policy(observations), dim=-1)
    return (old_log_probs.exp() * (old_log_probs - log_probs)).sum(-1).mean()


def _categorical_setup(seed, states):
    torch.manual_seed(seed)
    policy = torch.nn.Linear(3, 4).to(F64)
    observations = torch.randn(states, 3, dtype=F64)
    with torch.no_grad():
        old_log_probs = torch.log_softmax(policy(observations), dim=-1)
    return policy, observations, old_log_probs


def test_conjugate_gradient_matches_direct_solve():
    generator = torch.Generator().manual_seed(0)
    factor = torch.randn(20, 20, generator=generator, dtype=F64)
    matrix = factor @ factor.T / 20 + torch.eye(20, dtype=F64)  # eigenvalues in about [1, 5]
    b = torch.randn(20, generator=generator, dtype=F64)
    expected = torch.linalg.solve(matrix, b)
    solution = conjugate_gradient(lambda v: matrix @ v, b, iterations=20, residual_tolerance=1e-24)
    assert torch.allclose(solution, expected, atol=1e-8, rtol=0)
    # three steps are not enough: the iteration budget is honoured
    truncated = conjugate_gradient(lambda v: matrix @ v, b, iterations=3)
    assert (truncated - expected).abs().max() > 1e-3


def test_conjugate_gradient_stops_early_on_identity():
    calls = []

    def counting_identity(vector):
        calls.append(1)
        return vector

    b = torch.tensor([3.0, -1.0, 2.0], dtype=F64)
    solution = conjugate_gradient(counting_identity, b, iterations=10)
    assert len(calls) == 1
    assert torch.equal(solution, b)
    calls.clear()
    assert torch.equal(conjugate_gradient(counting_identity, torch.zeros(3, dtype=F64)), torch.zeros(3, dtype=F64))
    assert len(calls) == 0


def test_flat_gradient_concatenates_and_zero_fills_unused():
    first = torch.tensor([1.0, 2.0], requires_grad=True)
    unused = torch.ones(3, requires_grad=True)
    matrix = torch.tensor([[1.0, -2.0], [3.0, 0.5]], requires_grad=True)
    output = (2.0 * first).sum() + matrix.pow(2).sum()
    gradient = flat_gradient(output, [first, unused, matrix])
    assert torch.equal(gradient, torch.tensor([2.0, 2.0, 0.0, 0.0, 0.0, 2.0, -4.0, 6.0, 1.0]))


def test_fisher_vector_product_categorical_matches_explicit_fisher_and_hessian():
    policy, observations, old_log_probs = _categorical_setup(seed=1, states=7)
    parameters = list(policy.parameters())
    log_probs = torch.log_softmax(policy(observations), dim=-1)
    # F = mean_s sum_a pi(a|s) grad log pi(a|s) grad log pi(a|s)^T, from the scores alone
    fisher = torch.zeros(16, 16, dtype=F64)
    for state in range(7):
        for action in range(4):
            score = torch.cat([
                g.reshape(-1) for g in torch.autograd.grad(log_probs[state, action], parameters, retain_graph=True)
            ])
            fisher += log_probs[state, action].exp().detach() * torch.outer(score, score)
    fisher /= 7

    def mean_kl_of(flat):
        weight, bias = flat[:12].view(4, 3), flat[12:]
        log_probs = torch.log_softmax(observations @ weight.T + bias, dim=-1)
        return (old_log_probs.exp() * (old_log_probs - log_probs)).sum(-1).mean()

    hessian = torch.autograd.functional.hessian(mean_kl_of, parameters_to_vector(parameters).detach())
    assert torch.allclose(fisher, hessian, atol=1e-12)

    damping = 0.1
    product = fisher_vector_product(_categorical_mean_kl(policy, observations, old_log_probs), parameters, damping)
    damped = fisher + damping * torch.eye(16, dtype=F64)
    for _ in range(3):
        vector = torch.randn(16, dtype=F64)
        assert torch.allclose(product(vector), damped @ vector, atol=1e-12)


def test_fisher_vector_product_diagonal_gaussian_matches_closed_form():
    torch.manual_seed(2)
    mean_net = torch.nn.Linear(3, 2).to(F64)
    log_std = torch.nn.Parameter(0.3 * torch.randn(2, dtype=F64))
    observations = torch.randn(5, 3, dtype=F64)
    old_mean, old_log_std = mean_net(observations).detach(), log_std.detach()
    mean, std = mean_net(observations), log_std.exp()
    kl = log_std - old_log_std + (old_log_std.exp().pow(2) + (old_mean - mean).pow(2)) / (2 * std.pow(2)) - 0.5
    mean_kl = kl.sum(-1).mean()
    # mean block: mean_s J_s^T diag(1/sigma^2) J_s with J_s = d mean / d (weight, bias); log-std block: 2 I
    precision = torch.diag(old_log_std.exp().pow(-2))
    fisher = torch.zeros(10, 10, dtype=F64)
    for observation in observations:
        jacobian = torch.cat([torch.kron(torch.eye(2, dtype=F64), observation[None]), torch.eye(2, dtype=F64)], 1)
        fisher[:8, :8] += jacobian.T @ precision @ jacobian / len(observations)
    fisher[8:, 8:] = 2.0 * torch.eye(2, dtype=F64)
    product = fisher_vector_product(mean_kl, [mean_net.weight, mean_net.bias, log_std], damping=0.05)
    for _ in range(3):
        vector = torch.randn(10, dtype=F64)
        assert torch.allclose(product(vector), fisher @ vector + 0.05 * vector, atol=1e-12)


def test_natural_gradient_step_has_requested_quadratic_kl():
    fisher = torch.diag(torch.tensor([1.0, 4.0], dtype=F64))
    gradient = torch.tensor([1.0, 2.0], dtype=F64)
    direction = torch.tensor([1.0, 0.5], dtype=F64)  # F^-1 g; g . d = 2
    step = natural_gradient_step(gradient, direction, step_size=0.3)
    assert torch.allclose(step, torch.tensor([0.3, 0.15], dtype=F64) / math.sqrt(2.0))
    assert math.isclose(0.5 * (step @ fisher @ step).item(), 0.5 * 0.3**2, rel_tol=1e-12)
    with pytest.raises(ValueError, match="must be positive"):
        natural_gradient_step(gradient, -direction, step_size=0.3)


def test_max_kl_step_saturates_quadratic_kl():
    fisher = torch.diag(torch.tensor([1.0, 4.0], dtype=F64))
    direction = torch.tensor([1.0, 0.5], dtype=F64)  # d^T F d = 2
    step = max_kl_step(direction, fisher @ direction, max_kl=0.01)
    assert torch.allclose(step, 0.1 * direction)
    assert math.isclose(0.5 * (step @ fisher @ step).item(), 0.01, rel_tol=1e-12)


def test_line_search_backtracks_until_kl_is_satisfied():
    tried = []

    def evaluate(step):
        tried.append(step.item())
        return step.item(), step.item() ** 2 / 4  # KL 4, 1, 0.25 for steps 4, 2, 1

    step, backtracks = backtracking_line_search(evaluate, torch.tensor([4.0]), max_kl=0.5)
    assert step.item() == 1.0 and backtracks == 2
    assert tried == [4.0, 2.0, 1.0]


def test_line_search_rejects_steps_without_improvement_or_with_nan():
    tried = []

    def evaluate(step):
        tried.append(step.item())
        return (-1.0, 0.0) if len(tried) < 3 else (1.0, float("nan"))

    step, backtracks = backtracking_line_search(evaluate, torch.tensor([1.0]), max_kl=0.1, max_backtracks=5)
    assert step is None and backtracks == 5
    assert tried == [1.0, 0.5, 0.25, 0.125, 0.0625]


def _surrogate_problem(seed):
    policy, observations, old_log_probs = _categorical_setup(seed, states=64)
    parameters = list(policy.parameters())
    actions = torch.distributions.Categorical(logits=old_log_probs).sample()
    old_action_log_probs = old_log_probs.gather(1, actions[:, None]).squeeze(1)
    advantages = torch.randn(64, dtype=F64)

    def surrogate():
        action_log_probs = torch.log_softmax(policy(observations), -1).gather(1, actions[:, None]).squeeze(1)
        return ((action_log_probs - old_action_log_probs).exp() * advantages).mean()

    def mean_kl():
        return _categorical_mean_kl(policy, observations, old_log_probs)

    return parameters, surrogate, mean_kl


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize(("overshoot", "expected_backtracks"), [(1.0, 0), (3.0, 2)])
def test_trpo_step_on_categorical_policy_respects_true_kl(seed, overshoot, expected_backtracks):
    max_kl = 0.01
    parameters, surrogate, mean_kl = _surrogate_problem(seed)
    old_parameters = parameters_to_vector(parameters).detach()
    old_surrogate = surrogate()
    gradient = flat_gradient(old_surrogate, parameters)
    product = fisher_vector_product(mean_kl(), parameters, damping=0.01)
    direction = conjugate_gradient(product, gradient)
    # the quadratic model's step has true KL just under max_kl; three times it (KL ~9x) must be cut twice
    full_step = overshoot * max_kl_step(direction, product(direction), max_kl)

    def evaluate(step):
        with torch.no_grad():
            vector_to_parameters(old_parameters + step, parameters)
            return (surrogate() - old_surrogate).item(), mean_kl().item()

    step, backtracks = backtracking_line_search(evaluate, full_step, max_kl)
    assert step is not None and backtracks == expected_backtracks
    with torch.no_grad():
        vector_to_parameters(old_parameters + step, parameters)
        true_kl, improvement = mean_kl().item(), (surrogate() - old_surrogate).item()
    assert 0.25 * max_kl < true_kl <= max_kl
    assert improvement > 0


def test_npg_step_on_categorical_policy_has_requested_quadratic_kl():
    parameters, surrogate, mean_kl = _surrogate_problem(seed=7)
    gradient = flat_gradient(surrogate(), parameters)
    product = fisher_vector_product(mean_kl(), parameters, damping=0.0)
    direction = conjugate_gradient(product, gradient, iterations=16, residual_tolerance=1e-20)
    step = natural_gradient_step(gradient, direction, step_size=0.05)
    assert math.isclose(0.5 * (step @ product(step)).item(), 0.5 * 0.05**2, rel_tol=1e-6)
