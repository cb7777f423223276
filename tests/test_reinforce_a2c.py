"""REINFORCE and A2C: returns on hand-built rollouts, masking, gradient routing, one step per update, CartPole."""

import csv
import json

import gymnasium as gym
import pytest
import torch

import voidrl
from tests.cli_helpers import voidrl as voidrl_cli
from tests.learning import assert_majority, mean_of_last, train_seeds
from voidrl.algos import A2C, REINFORCE, A2CConfig, REINFORCEConfig
from voidrl.io.checkpoint import load_checkpoint, save_checkpoint
from voidrl.rollout import RolloutStorage

DISCRETE = gym.spaces.Discrete(2)
OBS_DIM = 3


def storage_from(rewards, values, next_values, terminated, truncated, valid=None, seed=0):
    """A ``[T, N]`` rollout with the given columns and random observations and actions."""
    rewards = torch.tensor(rewards, dtype=torch.float32)
    T, N = rewards.shape
    g = torch.Generator().manual_seed(seed)
    storage = RolloutStorage(T, N, (OBS_DIM,), torch.float32, (), torch.long)
    storage.obs.copy_(torch.randn(T, N, OBS_DIM, generator=g))
    storage.actions.copy_(torch.randint(0, 2, (T, N), generator=g))
    storage.rewards.copy_(rewards)
    storage.values.copy_(torch.tensor(values).unsqueeze(-1))  # one value head
    storage.next_values.copy_(torch.tensor(next_values).unsqueeze(-1))
    storage.terminated.copy_(torch.tensor(terminated))
    storage.truncated.copy_(torch.tensor(truncated))
    if valid is not None:
        storage.valid.copy_(torch.tensor(valid))
    return storage


def two_episode_rollout(seed=0):
    """Capacity 5, two envs, two episodes per env wanted (columns are envs, rows steps).

    env 0: an episode terminates at t=1, the next runs t=2..4 and is cut at capacity (V(last obs) = 4).
    env 1: an episode terminates at t=0, the next is truncated by the time limit at t=2 (V(final) = 6);
    that is its 2nd episode, so t=3, 4 are invalid.
    """
    F, T = False, True
    return storage_from(
        rewards=[[1, 1], [2, 1], [3, 2], [4, 7], [5, 9]],
        values=[[0.5, 0.1], [1.0, 0.2], [1.5, 0.3], [2.0, 0.4], [2.5, 0.5]],
        next_values=[[1.0, 0.0], [0.0, 0.3], [2.0, 6.0], [2.5, 0.5], [4.0, 8.0]],
        terminated=[[F, T], [T, F], [F, F], [F, F], [F, F]],
        truncated=[[F, F], [F, F], [F, T], [F, F], [F, F]],
        valid=[[T, T], [T, T], [T, T], [T, F], [T, F]], seed=seed,
    )


def reinforce(**options):
    torch.manual_seed(0)
    return REINFORCE(REINFORCEConfig(num_steps=5, episodes_per_env=2, gamma=0.5, **options), (OBS_DIM,), DISCRETE)


VALID = two_episode_rollout().valid


MONTE_CARLO = torch.tensor([[2.0, 1.0], [2.0, 2.0], [6.25, 2.0], [6.5, 0], [5.0, 0]])
"""G_t without bootstrapping: neither env 0's cut at capacity nor env 1's time limit."""
BOOTSTRAPPED = torch.tensor([[2.0, 1.0], [2.0, 3.5], [6.75, 5.0], [7.5, 0], [7.0, 0]])
"""G_t bootstrapped at the cuts: env 0 ends 5 + 0.5 * 4, env 1 ends 2 + 0.5 * 6."""


@pytest.mark.parametrize("baseline", [False, True])
def test_reinforce_returns_on_a_hand_built_rollout(baseline):
    rollout = two_episode_rollout()
    advantages, returns = reinforce(baseline=baseline).advantages(rollout)
    expected = BOOTSTRAPPED if baseline else MONTE_CARLO
    torch.testing.assert_close(returns[VALID], expected[VALID])
    torch.testing.assert_close(advantages[VALID], (expected - rollout.values[..., 0] if baseline else expected)[VALID])


@pytest.mark.parametrize("baseline,expected", [
    (False, [[2.0, 1.0], [2.0, 2.0], [6.25, 2.0], [6.25, 0], [6.25, 0]]),
    (True, [[1.5, 0.9], [1.5, 3.3], [5.25, 3.3], [5.25, 0], [5.25, 0]]),  # G_0 - V(s_0) of each episode
])
def test_reinforce_without_reward_to_go_weights_steps_by_their_episodes_first_step(baseline, expected):
    advantages, returns = reinforce(baseline=baseline, reward_to_go=False).advantages(two_episode_rollout())
    torch.testing.assert_close(advantages[VALID], torch.tensor(expected)[VALID])
    torch.testing.assert_close(returns[VALID], (BOOTSTRAPPED if baseline else MONTE_CARLO)[VALID])  # critic targets stay G_t


def test_reinforce_ignores_steps_after_the_last_counted_episode():
    """Rewards, observations, actions and values of invalid steps do not change the gradient."""
    rollout = two_episode_rollout()
    changed = two_episode_rollout()
    changed.rewards[3:, 1] = torch.tensor([100.0, -50.0])
    changed.obs[3:, 1] += 10.0
    changed.actions[3:, 1] = 1 - changed.actions[3:, 1]
    changed.log_probs[3:, 1] = -3.0
    changed.values[3:, 1] = 42.0
    changed.next_values[2:, 1, 0] = torch.tensor([6.0, 42.0, 42.0])  # only t >= 3 differ
    gradients = []
    for storage in (rollout, changed):
        algo = reinforce()
        algo.update(storage, progress=0.0)
        gradients.append(algo.parameters.flat.grad.clone())
    torch.testing.assert_close(gradients[0], gradients[1], rtol=0, atol=0)

    changed.rewards[0, 1] += 1.0  # a valid step does count
    algo = reinforce()
    algo.update(changed, progress=0.0)
    assert not torch.equal(algo.parameters.flat.grad, gradients[0])


@pytest.mark.parametrize("algorithm", ["reinforce", "a2c"])
@pytest.mark.parametrize("shared", [False, True])
def test_value_loss_reaches_only_the_critic_when_separate(algorithm, shared):
    """The gradient difference made by the value loss's weight lies on the critic alone (shared=False)."""
    grads = []
    for value_coef in (0.0, 1.0):
        torch.manual_seed(0)
        if algorithm == "reinforce":
            algo = REINFORCE(REINFORCEConfig(num_steps=5, shared=shared, value_coef=value_coef), (OBS_DIM,), DISCRETE)
        else:
            algo = A2C(A2CConfig(num_steps=5, shared=shared, value_coef=value_coef, max_grad_norm=None), (OBS_DIM,), DISCRETE)
        algo.update(two_episode_rollout(), progress=0.0)
        grads.append({name: p.grad.clone() for name, p in algo.policy.named_parameters()})
    critic = {name for name, p in algo.policy.named_parameters() if any(p is c for c in algo.policy.critic_parameters())}
    changed = {name for name in grads[0] if not torch.equal(grads[0][name], grads[1][name])}
    assert critic <= changed
    if shared:
        assert any(name.startswith("actor_body") for name in changed)
    else:
        assert changed == critic


def test_a2c_advantages_are_n_step_returns_minus_values():
    """gamma 0.5, lambda 1. env 0: terminated at t=0, time limit at t=1 (V(final) = 10), cut at t=2
    (V(last obs) = 4). env 1: one episode throughout, V(s_3) = 8."""
    F, T = False, True
    rollout = storage_from(
        rewards=[[1, 1], [2, 1], [3, 1]],
        values=[[0.5, 1.0], [1.0, 2.0], [1.5, 3.0]],
        next_values=[[0.0, 2.0], [10.0, 3.0], [4.0, 8.0]],
        terminated=[[T, F], [F, F], [F, F]],
        truncated=[[F, F], [T, F], [F, F]],
    )
    algo = A2C(A2CConfig(num_steps=3, gamma=0.5), (OBS_DIM,), DISCRETE)
    advantages, returns = algo.advantages(rollout)
    n_step = torch.tensor([
        [1.0, 1 + 0.5 + 0.25 + 0.125 * 8],   # env 1: the full 3-step return from t=0
        [2 + 0.5 * 10, 1 + 0.5 + 0.25 * 8],
        [3 + 0.5 * 4, 1 + 0.5 * 8],
    ])
    torch.testing.assert_close(returns, n_step)
    torch.testing.assert_close(advantages, n_step - rollout.values[..., 0])


@pytest.mark.parametrize("make", [
    lambda: A2C(A2CConfig(num_steps=5), (OBS_DIM,), DISCRETE),
    lambda: A2C(A2CConfig(num_steps=5, optimizer="adam"), (OBS_DIM,), DISCRETE),
    lambda: reinforce(),
], ids=["a2c-rmsprop", "a2c-adam", "reinforce"])
def test_one_optimiser_step_per_update(make):
    algo = make()
    before = algo.parameters.flat.detach().clone()
    metrics = algo.update(two_episode_rollout(), progress=0.0)
    assert int(algo.parameters.optimizer.state[algo.parameters.flat]["step"]) == 1
    assert not torch.equal(before, algo.parameters.flat)
    for name in ("train/policy_loss", "train/value_loss", "train/entropy", "train/grad_norm", "train/explained_variance"):
        assert name in metrics


def test_a2c_optimiser_is_rmsprop_by_default_and_a_bad_name_is_rejected():
    algo = A2C(A2CConfig(), (OBS_DIM,), DISCRETE)
    assert isinstance(algo.parameters.optimizer, torch.optim.RMSprop)
    assert algo.parameters.optimizer.param_groups[0]["alpha"] == 0.99 and algo.parameters.optimizer.param_groups[0]["eps"] == 1e-5
    with pytest.raises(ValueError, match="optimizer must be one of rmsprop, adam, got 'sgd'"):
        A2CConfig(optimizer="sgd").validate()


@pytest.mark.parametrize("make", [lambda: A2C(A2CConfig(num_steps=5), (OBS_DIM,), DISCRETE), lambda: reinforce()],
                         ids=["a2c", "reinforce"])
def test_checkpoint_round_trip_gives_the_same_next_update(tmp_path, make):
    original = make()
    original.update(two_episode_rollout(seed=1), progress=0.0)  # non-trivial optimiser state
    save_checkpoint(tmp_path / "ckpt.pt", {"algorithm": original.state_dict()})
    restored = make()
    restored.load_state_dict(load_checkpoint(tmp_path / "ckpt.pt")["algorithm"])
    rollout = two_episode_rollout(seed=2)
    assert original.update(rollout, progress=0.5) == restored.update(rollout, progress=0.5)
    torch.testing.assert_close(original.parameters.flat, restored.parameters.flat, rtol=0, atol=0)


@pytest.mark.slow
@pytest.mark.parametrize("algo,steps", [("reinforce", 120_000), ("a2c", 150_000)])
def test_most_seeds_solve_cartpole_with_the_preset(tmp_path, algo, steps):
    """Seeds 0-2 first average 475 at 56-74k steps here with REINFORCE, at 72-98k with A2C."""
    run_dirs = train_seeds(tmp_path, algo, steps)
    assert_majority([mean_of_last(run_dir) for run_dir in run_dirs], 450)


def test_cli_trains_reinforce_on_whole_episodes(tmp_path):
    result = voidrl_cli("train", "reinforce", "--env", "CartPole-v1", "--steps", "2000", "--run-dir", "run",
                        "--no-progress", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["algo_config"]["learning_rate"] == 5e-3  # the cartpole preset
    with open(tmp_path / "run" / "metrics.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert rows and all(float(row["train/valid_steps"]) > 0 for row in rows)


def test_notebook_pendulum_gets_its_own_preset():
    config = voidrl.make_config("a2c", env="voidrl/InvertedPendulumFall-v5")
    algo = config.algo_config
    assert (algo.continuous_policy, algo.mixture_modes, algo.action_persistence) == ("mixture", 3, 0.965)
    assert config.env.num_envs == 25 and algo.gamma == 0.95
    assert voidrl.make_config("ppo", env="voidrl/InvertedPendulumFall-v5").algo_config.continuous_policy == "gaussian"


@pytest.mark.slow
@pytest.mark.benchmark  # 3 seeds x 400k steps: ~3 min on 2 cores (~28 s per 100k steps and seed)
def test_mixture_policy_balances_the_notebook_pendulum_for_1000_steps(tmp_path):
    """A2C with the pendulum preset: on most seeds some greedy evaluation (5 episodes) balances all 1000 steps
    by 400k steps (seeds 0-2 did by 250k-400k here)."""
    run_dirs = train_seeds(tmp_path, "a2c", 400_000, env="voidrl/InvertedPendulumFall-v5", eval_every=50_000,
                           eval_episodes=5)
    best = []
    for run_dir in run_dirs:
        with open(run_dir / "evaluations.csv", newline="") as handle:
            best.append(max(float(row["return_mean"]) for row in csv.DictReader(handle)))
    assert_majority(best, 1000.0)


@pytest.mark.slow
def test_a2c_compiled_follows_the_eager_update_and_takes_a_schedule_without_recompiling():
    """``compile`` for A2C: the rollout's gradient as one compiled graph, the entropy weight a tensor input, so three
    updates at three scheduled weights compile once; the parameters follow the eager run's to 1e-5."""
    algos = []
    torch._dynamo.reset()  # compiles of earlier tests in this process (other configs) would count as recompiles
    with torch._dynamo.config.patch(error_on_recompile=True):
        for compile_ in (False, True):
            torch.manual_seed(0)
            algos.append(A2C(A2CConfig(num_steps=5, entropy_coef="lin_0.05", compile=compile_), (OBS_DIM,), DISCRETE))
            for progress in (0.0, 0.3, 0.6):
                metrics = algos[-1].update(two_episode_rollout(), progress)
            assert metrics["train/entropy_coef"] == pytest.approx(0.02)
    assert algos[0].gradient == algos[0].eager_gradient and algos[1].gradient != algos[1].eager_gradient
    eager, compiled = (algo.policy.state_dict() for algo in algos)
    for name in eager:
        torch.testing.assert_close(compiled[name], eager[name], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("algo", ["reinforce", "npg", "trpo"])
def test_compile_is_refused_by_name_where_the_update_is_not_compiled(algo):
    from voidrl.training.loop import check_parts
    from voidrl.training.presets import make_config

    with pytest.raises(ValueError, match="compile acts in ppo, a2c and a3c only"):
        check_parts(make_config(algo, env="CartPole-v1", compile=True))
