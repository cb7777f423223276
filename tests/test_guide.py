"""Jump-Start RL's guide for R2D2: it plays each episode's first steps greedily, for a horizon that shrinks to 0;
its steps are recorded as deterministic; its state survives a checkpoint; a guide that cannot guide is refused."""

import csv
import signal
import warnings

import gymnasium as gym
import pytest
import torch

from voidrl.algos import PPO, PPOConfig
from voidrl.algos.guide import JumpStartGuide
from voidrl.algos.r2d2 import R2D2, EpsilonGreedyCore, R2D2Config, trained_steps
from tests.test_exact_resume import CASES, assert_same_run, signal_at_vector_step
from voidrl.cli import main
from voidrl.io.checkpoint import load_checkpoint
from voidrl.nets.recurrent import RecurrentQNetwork
from voidrl.replay import Sequence
from tests.test_r2d2 import SMALL


def guide_policy(seed=0):
    torch.manual_seed(seed)
    return PPO.make_policy(PPOConfig(), (4,), gym.spaces.Discrete(3), "cpu")


def test_the_guide_plays_each_episodes_first_steps_for_a_horizon_that_shrinks_to_zero():
    policy = guide_policy()
    guide = JumpStartGuide(policy, steps=3, decay_steps=24, run_envs=4)  # two environments here, four in the run
    obs = torch.randn(2, 4)
    starts = torch.tensor([True, True])
    played = []
    for step in range(6):
        guided, actions = guide.actions(obs, starts)
        assert torch.equal(actions, policy.act(obs, policy.initial_state(2), starts, deterministic=True)[0])
        played.append(guided.tolist())
        starts = torch.tensor([step == 1, False])  # environment 0's second episode begins at step 2
    # horizon 3 * (1 - 4 t / 24) at vector step t: 3, 2.5, 2, 1.5, 1, 0.5
    assert played == [[True, True], [True, True], [True, False], [True, False], [False, False], [False, False]]
    assert guide.horizon() == 0 and guide.actions(obs, starts) is None


def test_a_guided_step_takes_the_guides_action_and_records_it_as_certain():
    policy = guide_policy()
    q_network = RecurrentQNetwork((4,), 3, "mlp", (8,), 8, 8, "lstm")
    config = R2D2Config(epsilon_base=1.0, epsilon_alpha=0.0)  # every unguided action uniform
    guide = JumpStartGuide(policy, steps=1, decay_steps=10**6)
    core = EpsilonGreedyCore(q_network, config, guide=guide)
    obs = torch.randn(64, 4)
    starts = torch.zeros(64, dtype=torch.bool)
    starts[:32] = True  # half the environments begin an episode: the guide plays their first step
    guide.actions(obs, torch.ones(64, dtype=torch.bool))  # every episode one step old
    action, _ = core.act(obs, q_network.initial_state(64), starts, torch.zeros(64))
    record = core.take_records()[0]
    greedy_guide = policy.act(obs, policy.initial_state(64), starts, deterministic=True)[0]
    assert torch.equal(action[:32], greedy_guide[:32]) and torch.equal(record.behaviour_probs[:32], torch.ones(32))
    assert not torch.equal(action[32:], greedy_guide[32:]) and (record.behaviour_probs[32:] < 1).all()


def test_the_guides_state_resumes_where_it_stopped():
    guide = JumpStartGuide(guide_policy(), steps=5, decay_steps=100)
    obs, starts = torch.randn(3, 4), torch.tensor([True, False, True])
    for _ in range(3):
        guide.actions(obs, starts)
        starts = torch.zeros(3, dtype=torch.bool)
    resumed = JumpStartGuide(guide_policy(seed=0), steps=5, decay_steps=100)
    resumed.load_state_dict(guide.state_dict())
    assert resumed.horizon() == guide.horizon() == 5 * (1 - 9 / 100)
    for _ in range(3):
        expected, got = guide.actions(obs, starts), resumed.actions(obs, starts)
        assert all(torch.equal(a, b) for a, b in zip(expected, got))


def guided_agent(margin_weight, seed=0):
    """A small R2D2 agent of 3 actions on observations [4] with DQfD's margin loss at ``margin_weight``."""
    torch.manual_seed(seed)
    config = R2D2Config(**SMALL, learning_rate=1e-3, guide_margin_coef=margin_weight, guide_margin=0.8)
    return R2D2(config, (4,), gym.spaces.Discrete(3))


def guided_sequences(agent, seed, count=6):
    """``count`` sequences of no reward, none ending or starting an episode, each step guided with probability 1/2 and
    its action 0 or 2 by the sign of the observation's first entry (what a guide could have played)."""
    g = torch.Generator().manual_seed(seed)
    length, size = agent.config.sequence_length, agent.config.lstm_size
    sequences = []
    for _ in range(count):
        obs = torch.randn(length + 1, 4, generator=g)
        sequences.append(Sequence(obs=obs, actions=2 * (obs[:-1, 0] > 0).long(), rewards=torch.zeros(length),
                                  behaviour_probs=torch.ones(length), guided=torch.rand(length, generator=g) < 0.5,
                                  terminated=torch.zeros(length, dtype=torch.bool), truncated=torch.zeros(length, dtype=torch.bool),
                                  mask=torch.ones(length, dtype=torch.bool), start_state=(torch.zeros(size), torch.zeros(size)),
                                  previous_action=torch.tensor(0), previous_reward=torch.tensor(0.0), starts_episode=False))
    return sequences


def online_q(agent, batch):
    previous_actions = torch.cat([batch.previous_action.unsqueeze(0), batch.actions])
    previous_rewards = torch.cat([batch.previous_reward.unsqueeze(0), batch.rewards])
    return agent.learner.unroll_with_burn_in(batch.obs, previous_actions, previous_rewards, batch.start_state, batch.starts_episode)[:-1]


def test_the_margin_loss_is_dqfds_on_the_trained_guided_steps_weighted_as_the_td_loss():
    agent = guided_agent(1.0)
    agent.replay.add(guided_sequences(agent, seed=0))
    agent.replay.update_priorities(agent.replay.sample(6).keys, torch.arange(1.0, 7.0))  # importance weights below 1
    batch = agent.replay.sample(6)
    q = torch.randn(*batch.actions.shape, 3, generator=torch.Generator().manual_seed(1))
    trained = trained_steps(batch.mask, batch.starts_episode, agent.config.burn_in)
    assert (batch.guided & ~trained).any() and (batch.guided & trained).any() and (batch.weights < 1).any()
    total = 0.0
    for t, b in zip(*torch.nonzero(batch.guided & trained, as_tuple=True)):
        values, a_guide = q[t, b].tolist(), int(batch.actions[t, b])
        total += batch.weights[b].item() * (max(v + (0.0 if a == a_guide else 0.8) for a, v in enumerate(values)) - values[a_guide])
    expected = total / trained.sum().item()
    assert agent.learner.imitation_loss(q, batch, trained).item() == pytest.approx(expected, rel=1e-5)
    assert guided_agent(0.0).learner.imitation_loss(q, batch, trained).item() == 0.0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_margin_loss_makes_the_guides_actions_the_greedy_ones_where_it_played(seed):
    # no reward: TD alone leaves the greedy actions to chance (about half of them the guide's in seeds 0-4, up to 0.88)
    agent = guided_agent(1.0, seed)
    agent.replay.add(guided_sequences(agent, seed))
    for _ in range(100):
        metrics = agent.learner.learn(agent.replay.sample(6))
    batch = agent.replay.sample(6)
    imitated = batch.guided & trained_steps(batch.mask, batch.starts_episode, agent.config.burn_in)
    with torch.no_grad():
        greedy = online_q(agent, batch).argmax(-1)
    assert (greedy == batch.actions)[imitated].float().mean().item() >= 0.95
    assert 0 < metrics["train/guided_share"] < 1 and metrics["train/guide_margin_loss"] >= 0


@pytest.fixture(scope="module")
def saved_actor_critic(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("guide") / "ppo"
    assert main(["train", "ppo", "--env", "CartPole-v1", "--steps", "2048", "--torch-threads", "1", "--no-progress",
                 "--run-dir", str(run_dir)]) == 0
    return run_dir / "checkpoint.pt"


def train_r2d2(run_dir, *extra):
    return main(["train", "r2d2", "--env", "CartPole-v1", "--preset", "cartpole", "--steps", "1600", "--torch-threads", "1",
                 "--no-progress", "--run-dir", str(run_dir), "--min-replay", "16", *extra])


def test_a_guided_run_logs_its_horizon_down_to_zero_and_its_imitated_share_and_repeats_with_its_seed(tmp_path, saved_actor_critic):
    guided = ["--guide", str(saved_actor_critic), "--guide-steps", "20", "--guide-decay-steps", "800", "--guide-margin-coef", "1",
              "--seed", "5"]
    assert train_r2d2(tmp_path / "a", *guided) == 0 and train_r2d2(tmp_path / "b", *guided) == 0
    rows = list(csv.DictReader((tmp_path / "a" / "metrics.csv").open()))
    horizons = [float(row["actors/guide_horizon"]) for row in rows if row.get("actors/guide_horizon")]
    assert horizons[0] > 0 and horizons[-1] == 0 and horizons == sorted(horizons, reverse=True)
    shares = [float(row["train/guided_share"]) for row in rows if row.get("train/guided_share")]
    assert shares and shares[0] > 0 and all(0 <= share <= 1 for share in shares)
    assert (tmp_path / "a" / "episodes.csv").read_text() == (tmp_path / "b" / "episodes.csv").read_text()


def test_a_guided_run_stopped_and_resumed_is_the_run_left_alone(tmp_path, monkeypatch, saved_actor_critic):
    command, signal_step, checkpoint_step = CASES["r2d2-save-replay"]
    command = [*command, "--guide", str(saved_actor_critic), "--guide-steps", "30", "--guide-decay-steps", "1000",
               "--guide-margin-coef", "1", "--seed", "3", "--no-progress", "--torch-threads", "1"]
    assert main([*command, "--run-dir", str(tmp_path / "alone")]) == 0
    with monkeypatch.context() as patched:
        signal_at_vector_step(patched, signal_step)
        assert main([*command, "--run-dir", str(tmp_path / "stopped")]) == 128 + signal.SIGTERM
    saved = load_checkpoint(tmp_path / "stopped" / "checkpoint.pt")
    assert saved["step"] == checkpoint_step and saved["episodes"]["acting"]["core"]["guide"]["vector_steps"] > 0  # still guiding
    assert main([*command, "--run-dir", str(tmp_path / "stopped"), "--resume"]) == 0
    assert_same_run(tmp_path / "alone", tmp_path / "stopped")


@pytest.mark.parametrize("algo,extra,message", [
    ("r2d2", ["--guide-steps", "5"], "guide_steps acts with guide set only"),
    ("r2d2", ["--guide-margin-coef", "1"], "guide_margin_coef acts with guide set only"),
    ("r2d2", ["--guide", "GUIDE", "--guide-margin", "0.5"], "guide_margin acts with guide_margin_coef above 0 only"),
    ("ngu", ["--guide-margin-coef", "1"], "unrecognized arguments: --guide-margin-coef"),  # R2D2's part, not NGU's
    ("ngu", ["--guide", "GUIDE"], "unrecognized arguments: --guide"),
    ("r2d2", ["--guide", "Q"], "a guide is an actor-critic's run"),
    ("r2d2", ["--guide", "GUIDE", "--env", "voidrl/CartPoleNoVelocity-v1"], "does not fit this run's environments"),
])
def test_a_guide_that_cannot_guide_is_refused_before_anything_is_written(tmp_path, capsys, saved_actor_critic, algo, extra, message):
    q_checkpoint = tmp_path / "q"
    if "Q" in extra:
        assert train_r2d2(q_checkpoint) == 0
    paths = {"GUIDE": str(saved_actor_critic), "Q": str(q_checkpoint / "checkpoint.pt")}
    assert message in refusal(tmp_path, capsys, algo, [paths.get(item, item) for item in extra])


def refusal(tmp_path, capsys, algo, extra):
    """What ``voidrl train algo ... extra`` (on CartPole-v1 unless ``extra`` names an environment) writes to stderr
    as it refuses its options with exit status 2, before writing anything."""
    env = [] if "--env" in extra else ["--env", "CartPole-v1"]
    capsys.readouterr()
    assert main(["train", algo, *env, "--steps", "800", "--no-progress", "--run-dir", str(tmp_path / "bad"), *extra]) == 2
    assert not (tmp_path / "bad").exists()
    return capsys.readouterr().err


@pytest.mark.parametrize("env,warned", [("CartPole-v1", False), ("CartPole-v0", True)])
def test_a_guide_from_another_environment_id_guides_with_a_warning_naming_both(tmp_path, saved_actor_critic, env, warned):
    assert other_environment_warnings(tmp_path, "guide", saved_actor_critic, env) == (
        [f"guide: {str(saved_actor_critic)!r} was trained on CartPole-v1, and this run's environment is CartPole-v0; "
         "its networks are used where their shapes fit"] if warned else [])


def other_environment_warnings(tmp_path, field, saved, env):
    """The other-environment warnings of a short R2D2 run on ``env`` given ``--field saved`` (a CartPole-v1 policy)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert train_r2d2(tmp_path / "run", "--env", env, "--steps", "200", f"--{field}", str(saved)) == 0
    return [str(w.message) for w in caught if "was trained on" in str(w.message)]
