"""R2D2's prior: a frozen actor-critic inside the Q-network, Q(s, a) = Q_theta(s, a) + w log pi_prior(a|s). Every Q
holds it, a heavy prior's greedy actions are its own, learning leaves it as loaded, a run with it resumes exactly, and
a prior that cannot serve is refused before anything is written."""

import signal

import gymnasium as gym
import pytest
import torch

from tests.test_exact_resume import CASES, assert_same_run, signal_at_vector_step
from tests.test_guide import other_environment_warnings, refusal, saved_actor_critic, train_r2d2  # noqa: F401 (a fixture)
from voidrl.algos import PPO, PPOConfig
from voidrl.algos.r2d2 import R2D2, R2D2Config
from voidrl.cli import main
from voidrl.io.checkpoint import load_checkpoint
from voidrl.nets.recurrent import RecurrentQNetwork


def prior_policy(seed=0):
    torch.manual_seed(seed)
    return PPO.make_policy(PPOConfig(), (4,), gym.spaces.Discrete(3), "cpu").requires_grad_(False)


def log_probs_one_action_at_a_time(policy, obs):
    """``[N, A]`` log pi(a|s) of ``obs [N, 4]``, each action's from the distribution's ``log_prob``."""
    starts = torch.zeros(len(obs), dtype=torch.bool)
    distribution, _, _ = policy(obs, policy.initial_state(len(obs)), starts)
    return torch.stack([distribution.log_prob(torch.full((len(obs),), action)) for action in range(3)], dim=-1)


@pytest.mark.parametrize("memory", ["none", "lstm"])
def test_every_q_holds_the_priors_weighted_log_probabilities(memory):
    prior = prior_policy()
    torch.manual_seed(1)
    with_prior = RecurrentQNetwork((4,), 3, "mlp", (8,), 8, 8, memory, prior=prior, prior_coef=0.5)
    alone = RecurrentQNetwork((4,), 3, "mlp", (8,), 8, 8, memory)
    alone.load_state_dict({key: value for key, value in with_prior.state_dict().items() if not key.startswith("prior.")})
    obs = torch.randn(5, 2, 4)
    actions, rewards = torch.randint(3, (5, 2)), torch.randn(5, 2)
    state = alone.initial_state(2)
    q, _ = with_prior.unroll(obs, actions, rewards, (state.hidden, state.cell))
    q_alone, _ = alone.unroll(obs, actions, rewards, (state.hidden, state.cell))
    expected = q_alone + 0.5 * log_probs_one_action_at_a_time(prior, obs.flatten(0, 1)).view(5, 2, 3)
    torch.testing.assert_close(q, expected)


def test_a_heavy_prior_makes_the_greedy_actions_its_own():
    prior = prior_policy()
    prior.policy_head.weight.mul_(100.0)  # a fresh policy head is 100x smaller than the rest: near uniform, no preferences
    q_network = RecurrentQNetwork((4,), 3, "mlp", (8,), 8, 8, "none", prior=prior, prior_coef=100.0)
    obs = torch.randn(64, 4)
    starts = torch.ones(64, dtype=torch.bool)
    greedy, _ = q_network.act(obs, q_network.initial_state(64), starts, torch.zeros(64))
    assert torch.equal(greedy, prior.act(obs, prior.initial_state(64), starts, deterministic=True)[0])
    assert len(set(greedy.tolist())) > 1  # the prior's preferences vary over states: not one action everywhere


def test_the_learner_trains_the_q_network_and_not_the_prior(saved_actor_critic):
    agent = R2D2(R2D2Config(network="mlp", prior=str(saved_actor_critic)), (4,), gym.spaces.Discrete(2))
    trained = {id(parameter) for parameter in agent.learner.q_parameters()}
    prior = {id(parameter) for parameter in agent.policy.prior.parameters()}
    assert prior and not trained & prior
    assert trained | prior == {id(parameter) for parameter in agent.policy.parameters()}


def test_a_run_with_a_prior_keeps_it_as_loaded(tmp_path, saved_actor_critic):
    assert train_r2d2(tmp_path / "run", "--prior", str(saved_actor_critic), "--prior-coef", "2") == 0
    loaded = load_checkpoint(saved_actor_critic)["algorithm"]["policy"]
    saved = load_checkpoint(tmp_path / "run" / "checkpoint.pt")["algorithm"]
    for key, value in loaded.items():
        assert torch.equal(saved["policy"][f"prior.{key}"], value) and torch.equal(saved["target"][f"prior.{key}"], value)
    assert saved["updates"] > 0


@pytest.mark.slow
def test_a_run_with_a_prior_stopped_and_resumed_is_the_run_left_alone(tmp_path, monkeypatch, saved_actor_critic):
    command, signal_step, checkpoint_step = CASES["r2d2-save-replay"]
    command = [*command, "--prior", str(saved_actor_critic), "--seed", "3", "--no-progress", "--torch-threads", "1"]
    assert main([*command, "--run-dir", str(tmp_path / "alone")]) == 0
    with monkeypatch.context() as patched:
        signal_at_vector_step(patched, signal_step)
        assert main([*command, "--run-dir", str(tmp_path / "stopped")]) == 128 + signal.SIGTERM
    assert load_checkpoint(tmp_path / "stopped" / "checkpoint.pt")["step"] == checkpoint_step
    assert main([*command, "--run-dir", str(tmp_path / "stopped"), "--resume"]) == 0
    assert_same_run(tmp_path / "alone", tmp_path / "stopped")


@pytest.fixture(scope="module")
def saved_recurrent_actor_critic(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("prior") / "ppo-lstm"
    assert main(["train", "ppo", "--env", "CartPole-v1", "--memory", "lstm", "--num-envs", "2", "--num-steps", "32", "--steps", "128",
                 "--torch-threads", "1", "--no-progress", "--run-dir", str(run_dir)]) == 0
    return run_dir / "checkpoint.pt"


@pytest.mark.parametrize("algo,extra,message", [
    ("r2d2", ["--prior-coef", "2"], "prior_coef acts with prior set only"),
    ("r2d2", ["--prior", "PRIOR", "--prior-coef", "0"], "prior_coef must be positive"),
    ("ngu", ["--prior", "PRIOR"], "ambiguous option: --prior could match --priority-exponent"),  # R2D2's part, not NGU's
    ("r2d2", ["--prior", "Q"], "a prior is an actor-critic's run"),
    ("r2d2", ["--prior", "LSTM"], "is a recurrent policy; a prior reads each step alone"),
    ("r2d2", ["--prior", "PRIOR", "--env", "voidrl/CartPoleNoVelocity-v1"], "prior: "),
])
def test_a_prior_that_cannot_serve_is_refused_before_anything_is_written(tmp_path, capsys, saved_actor_critic,
                                                                          saved_recurrent_actor_critic, algo, extra, message):
    q_checkpoint = tmp_path / "q"
    if "Q" in extra:
        assert train_r2d2(q_checkpoint) == 0
    paths = {"PRIOR": str(saved_actor_critic), "Q": str(q_checkpoint / "checkpoint.pt"), "LSTM": str(saved_recurrent_actor_critic)}
    assert message in refusal(tmp_path, capsys, algo, [paths.get(item, item) for item in extra])


@pytest.mark.parametrize("env,warned", [("CartPole-v1", False), ("CartPole-v0", True)])
def test_a_prior_from_another_environment_id_serves_with_a_warning_naming_both(tmp_path, saved_actor_critic, env, warned):
    assert other_environment_warnings(tmp_path, "prior", saved_actor_critic, env) == (
        [f"prior: {str(saved_actor_critic)!r} was trained on CartPole-v1, and this run's environment is CartPole-v0; "
         "its networks are used where their shapes fit"] if warned else [])
