"""PPO loss functions against hand-computed values."""

import math

import numpy as np
import torch

from voidrl.math import (
    RunningMeanStd,
    approx_kl,
    clipped_surrogate_loss,
    entropy_loss,
    explained_variance,
    policy_gradient_loss,
    value_loss,
)


def test_clipped_surrogate_hand_computed():
    # ratios 1.5, 0.5, 1.1 with clip 0.2; advantages +1, +1, -2
    old = torch.zeros(3)
    new = torch.log(torch.tensor([1.5, 0.5, 1.1]))
    adv = torch.tensor([1.0, 1.0, -2.0])
    loss, metrics = clipped_surrogate_loss(new, old, adv, clip=0.2)
    # min(1.5*1, 1.2*1) = 1.2 ; min(0.5*1, 0.8*1) = 0.5 ; min(1.1*-2, 1.1*-2) = -2.2
    expected = -(1.2 + 0.5 - 2.2) / 3
    assert math.isclose(loss.item(), expected, rel_tol=1e-6)
    assert math.isclose(metrics["train/clip_fraction"].item(), 2 / 3, rel_tol=1e-6)


def test_clipped_surrogate_gradient_vanishes_outside_the_band():
    new = torch.log(torch.tensor([1.5])).requires_grad_()
    loss, _ = clipped_surrogate_loss(new, torch.zeros(1), torch.tensor([1.0]), clip=0.2)
    loss.backward()
    assert new.grad.item() == 0.0
    inside = torch.log(torch.tensor([1.1])).requires_grad_()
    loss, _ = clipped_surrogate_loss(inside, torch.zeros(1), torch.tensor([1.0]), clip=0.2)
    loss.backward()
    assert math.isclose(inside.grad.item(), -1.1, rel_tol=1e-6)  # d(-r A)/d log r = -r A


def test_value_loss_plain_and_clipped():
    values = torch.tensor([2.0, 0.0])
    returns = torch.tensor([1.0, 1.0])
    old = torch.tensor([1.0, 0.9])
    loss, _ = value_loss(values, returns)
    assert math.isclose(loss.item(), 0.5 * (1.0 + 1.0) / 2)
    clipped, _ = value_loss(values, returns, old, clip=0.5)
    # sample 0: V_clip = 1.5 -> max(1, 0.25) = 1 ; sample 1: V_clip = 0.4 -> max(1, 0.36) = 1
    assert math.isclose(clipped.item(), 0.5)
    values = torch.tensor([1.2])
    clipped, _ = value_loss(values, torch.tensor([2.0]), torch.tensor([1.0]), clip=0.1)
    # unclipped (0.8)^2 = 0.64, clipped V = 1.1 -> 0.81: the pessimistic max is taken
    assert math.isclose(clipped.item(), 0.5 * 0.81, rel_tol=1e-6)


def test_entropy_loss_and_approx_kl():
    loss, metrics = entropy_loss(torch.tensor([1.0, 3.0]))
    assert loss.item() == -2.0 and metrics["train/entropy"].item() == 2.0
    assert approx_kl(torch.zeros(4), torch.zeros(4)).item() == 0.0
    # k3 estimator: r - 1 - log r with r = e
    assert math.isclose(approx_kl(torch.tensor([1.0]), torch.tensor([0.0])).item(), math.e - 2.0, rel_tol=1e-6)


def test_explained_variance():
    targets = torch.tensor([1.0, 2.0, 3.0, 4.0])
    assert explained_variance(targets, targets).item() == 1.0
    assert abs(explained_variance(torch.full((4,), 2.5), targets).item()) < 1e-6
    assert math.isnan(explained_variance(targets, torch.ones(4)).item())


def test_running_mean_std_matches_numpy_on_concatenated_batches():
    rng = np.random.default_rng(0)
    batches = [rng.normal(3.0, 2.0, size=(n, 3)) for n in (1, 7, 100, 2)]
    stats = RunningMeanStd((3,))
    for batch in batches:
        stats.update(torch.from_numpy(batch))
    everything = np.concatenate(batches)
    np.testing.assert_allclose(stats.mean.numpy(), everything.mean(0), rtol=1e-10)
    np.testing.assert_allclose(stats.var.numpy(), everything.var(0), rtol=1e-10)
    assert stats.count.item() == len(everything)
    restored = RunningMeanStd((3,))
    restored.load_state_dict(stats.state_dict())
    assert torch.equal(restored.mean, stats.mean) and torch.equal(restored.var, stats.var)


def test_policy_gradient_loss_hand_computed_with_constant_advantages():
    log_prob = torch.tensor([-1.0, -2.0, -0.5], requires_grad=True)
    advantages = torch.tensor([2.0, -1.0, 4.0], requires_grad=True)
    loss, metrics = policy_gradient_loss(log_prob, advantages)
    expected = -((-1.0 * 2.0) + (-2.0 * -1.0) + (-0.5 * 4.0)) / 3  # = 2/3
    assert math.isclose(loss.item(), expected, rel_tol=1e-6)
    assert metrics["train/policy_loss"].item() == loss.item()
    loss.backward()
    torch.testing.assert_close(log_prob.grad, torch.tensor([-2.0, 1.0, -4.0]) / 3)  # -A / B
    assert advantages.grad is None  # the advantages are constants
