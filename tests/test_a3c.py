"""A3C's two halves: the actor-learner's gradient (its parameters untouched) and the holder's step with
one RMSprop all gradients share, checked against RMSprop written out; one actor-learner in this process
takes exactly A2C's step; CartPole solved by two actor-learners on Ray (benchmark)."""

import gymnasium as gym
import pytest
import torch

from tests.learning import SEEDS, assert_majority, greedy_scores, train_seeds
from tests.test_reinforce_a2c import two_episode_rollout
from voidrl.algos import A2C, A3C, A2CConfig, A3CConfig

DISCRETE = gym.spaces.Discrete(2)
OBS_DIM = 3


def a3c(**options):
    torch.manual_seed(0)
    return A3C(A3CConfig(num_steps=5, **options), (OBS_DIM,), DISCRETE)


def flat_parameters(algo):
    return torch.cat([p.detach().reshape(-1) for p in algo.policy.parameters()])


def test_one_actor_learner_in_this_process_takes_a2cs_step():
    rollout = two_episode_rollout()
    torch.manual_seed(0)
    a2c = A2C(A2CConfig(num_steps=5, entropy_coef=0.01, max_grad_norm=40.0), (OBS_DIM,), DISCRETE)
    learner = a3c()
    assert torch.equal(flat_parameters(a2c), flat_parameters(learner))
    metrics = learner.update(rollout, 0.0)
    assert metrics.pop("train/updates") == learner.updates == 1
    assert a2c.update(rollout, 0.0) == metrics
    assert torch.equal(flat_parameters(a2c), flat_parameters(learner))


def test_the_gradient_is_the_losss_and_leaves_the_actor_learners_parameters_alone():
    learner, rollout = a3c(), two_episode_rollout()
    before = flat_parameters(learner)
    gradient, metrics = learner.actor_gradient(rollout)
    assert torch.equal(flat_parameters(learner), before)
    loss, _ = learner.loss(learner.batch_fields(rollout) | {"entropy_coef": torch.tensor(learner.config.entropy_coef)})
    expected = torch.cat([g.reshape(-1) for g in torch.autograd.grad(loss, list(learner.policy.parameters()))])
    torch.testing.assert_close(gradient, expected)
    assert gradient.abs().sum() > 0 and "train/entropy" in metrics
    learner.actor_gradient(two_episode_rollout(seed=1))
    assert not torch.equal(gradient, learner.parameters.flat.grad), "the gradient handed out must be a copy"


def test_the_holder_applies_stale_gradients_with_one_rmsprop_whose_statistics_they_share():
    """Two actor-learners compute gradients at the same (version 0) parameters; the holder applies the
    second on parameters the first has already moved, with the squared-gradient average of both."""
    lr, alpha, eps = 0.01, 0.9, 1e-5
    options = {"learning_rate": lr, "rmsprop_alpha": alpha, "optimizer_eps": eps, "max_grad_norm": None}
    holder, first, second = a3c(**options), a3c(**options), a3c(**options)
    g1, _ = first.actor_gradient(two_episode_rollout(seed=1))
    g2, _ = second.actor_gradient(two_episode_rollout(seed=2))
    theta = flat_parameters(holder)
    holder.apply_gradient(g1, 0.0)
    holder.apply_gradient(g2, 0.0)

    square_average = (1 - alpha) * g1**2
    theta = theta - lr * g1 / (square_average.sqrt() + eps)
    square_average = alpha * square_average + (1 - alpha) * g2**2
    theta = theta - lr * g2 / (square_average.sqrt() + eps)
    torch.testing.assert_close(flat_parameters(holder), theta)
    assert holder.updates == 2
    assert torch.equal(flat_parameters(first), flat_parameters(second)), "the actor-learners' copies stay where they were"


def test_the_holder_clips_each_gradient_to_max_grad_norm():
    holder = a3c(max_grad_norm=0.5)
    gradient = torch.full_like(holder.parameters.flat, 3.0)
    metrics = holder.apply_gradient(gradient, 0.0)
    assert metrics["train/grad_norm"] == pytest.approx(gradient.norm().item(), rel=1e-5)
    torch.testing.assert_close(holder.parameters.flat.grad.norm(), torch.tensor(0.5), rtol=1e-4, atol=0)



@pytest.mark.benchmark
def test_a3c_actor_learners_on_ray_solve_cartpole(tmp_path):
    """Two actor-learners on Ray, one seed after another (each run starts its own Ray); greedy evaluation of
    each seed's final parameters. ~2 min per seed."""
    pytest.importorskip("ray")
    runs = [run for seed in SEEDS for run in train_seeds(tmp_path, "a3c", 150_000, seeds=(seed,), preset="cartpole", actors=2)]
    assert_majority(greedy_scores(runs), 475.0)
