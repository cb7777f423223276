"""NGU and Agent57: the episodic reward against a brute-force loop and a hand-computed case, memories
emptied at episode starts, the life-long modulator against numpy, the policy family and the bandit against
hand-computed values, per-sequence discounts, inverse dynamics and its isolation from the Q-loss, the
combined values of Agent57, and both agents through the command line with resume."""

import math

import gymnasium as gym
import numpy as np
import pytest
import torch

from voidrl.algos import NGU, Agent57, Agent57Config, NGUConfig
from voidrl.algos.meta_controller import SlidingWindowUCB, best_arm
from voidrl.algos.ngu import policy_family
from voidrl.cli import main
from voidrl.intrinsic.ngu import EpisodicMemory, NoveltyModule
from voidrl.io.checkpoint import load_checkpoint
from voidrl.math import inverse_value_rescale, n_step_targets, retrace_targets, value_rescale
from voidrl.math.knn import episodic_novelty, lifelong_modulator

OBS = (6,)


def test_episodic_novelty_by_hand():
    # d_m^2 = 2: normalised 0.5 - 0.008 and 2 - 0.008; a duplicate at 0 clusters to 0 (kernel 1).
    squared = torch.tensor([[1.0, 4.0], [0.0, float("inf")]])
    eps, c = 1e-3, 1e-3
    kernels = [eps / (0.492 + eps) + eps / (1.992 + eps), 1.0]
    expected = [1.0 / (math.sqrt(k) + c) for k in kernels]
    assert episodic_novelty(squared, 2.0).tolist() == pytest.approx(expected, rel=1e-6)
    # sqrt(sum K) + c above the maximum similarity: reward 0.
    assert episodic_novelty(torch.zeros(1, 10), 1.0, max_similarity=3.0).item() == 0.0


def test_lifelong_modulator_against_numpy():
    errors = np.array([0.1, 0.5, 2.0, 9.0])
    mean, std = 0.5, 0.5
    expected = np.clip(1.0 + (errors - mean) / std, 1.0, 5.0)
    assert lifelong_modulator(torch.tensor(errors), mean, std).numpy() == pytest.approx(expected)


def brute_force_episode_rewards(embeddings, errors, k, capacity, distance_stats, error_stats, **kernel):
    """One environment's episode, step by step in plain Python: the k-NN of each embedding among the earlier
    ones (the last ``capacity``), running means over every squared k-NN distance and every error so far."""
    memory, distances, seen_errors, rewards = [], list(distance_stats), list(error_stats), []
    for embedding, error in zip(embeddings.tolist(), errors.tolist()):
        squared = sorted(sum((a - b) ** 2 for a, b in zip(embedding, other)) for other in memory[-capacity:])[:k]
        distances += squared
        seen_errors.append(error)
        if not squared:
            episodic = 0.0
        else:
            mean_squared = sum(distances) / len(distances)
            kernel_sum = sum(kernel["kernel_eps"] / (max(d / mean_squared - kernel["cluster_distance"], 0.0) + kernel["kernel_eps"])
                             for d in squared)
            similarity = math.sqrt(kernel_sum) + kernel["pseudo_count"]
            episodic = 0.0 if similarity > kernel["max_similarity"] else 1.0 / similarity
        error_mean = sum(seen_errors) / len(seen_errors)
        error_std = max(math.sqrt(sum((e - error_mean) ** 2 for e in seen_errors) / len(seen_errors)), 1e-8)
        rewards.append(episodic * min(max(1.0 + (error - error_mean) / error_std, 1.0), 5.0))
        memory.append(embedding)
    return rewards


def test_episodic_rewards_match_a_brute_force_loop_and_memories_empty_at_episode_starts():
    torch.manual_seed(0)
    kernel = dict(kernel_eps=1e-3, pseudo_count=1e-3, cluster_distance=8e-3, max_similarity=8.0)
    module = NoveltyModule(OBS, 3, "mlp", (16,), embedding_size=4, episodic_neighbours=3, **kernel)
    memory = EpisodicMemory(1, capacity=5, dim=4)
    obs = torch.randn(12, *OBS)
    obs[7] = obs[2]  # a revisited state: a neighbour at distance 0
    got, errors = [], []
    for o in obs:  # RND's error of each state, under the observation statistics of the steps before it
        errors.append(module.rnd.errors(o.unsqueeze(0)).item())
        got.append(module.rewards(o.unsqueeze(0), memory, learn_statistics=True)["intrinsic"].item())
    with torch.no_grad():
        embeddings = module.embedding(obs)
    expected = brute_force_episode_rewards(embeddings, torch.tensor(errors), 3, 5, [], [], **kernel)
    assert got == pytest.approx(expected, rel=1e-4)
    assert got[0] == 0.0 and got[7] < min(got[6], got[8])  # nothing to compare with; then the revisit
    assert memory.sizes.tolist() == [5]  # bounded

    two = EpisodicMemory(2, capacity=8, dim=4)
    for o in obs[:3]:
        module.rewards(torch.stack([o, o]), two, learn_statistics=False)
    module.rewards(torch.stack([obs[3], obs[3]]), two, learn_statistics=False)
    two.clear(torch.tensor([True, False]))
    assert two.sizes.tolist() == [0, 4]
    after = module.rewards(torch.stack([obs[0], obs[0]]), two, learn_statistics=False)["episodic"]
    assert after[0] == 0.0 and after[1] > 0.0  # the emptied memory has no neighbour; the other still knows obs[0]


def test_policy_family_by_hand():
    betas, gammas = policy_family(4, 0.3, 0.997, 0.99)
    sigmoid = lambda x: 1.0 / (1.0 + math.exp(-x))  # noqa: E731
    assert betas.tolist() == pytest.approx([0.0, 0.3 * sigmoid(0.0), 0.3 * sigmoid(10.0), 0.3])
    gaps = [math.exp(((3 - j) * math.log(0.003) + j * math.log(0.01)) / 3) for j in range(4)]
    assert gammas.tolist() == pytest.approx([1.0 - g for g in gaps])
    assert gammas[0].item() == pytest.approx(0.997) and gammas[-1].item() == pytest.approx(0.99)
    one = policy_family(1, 0.3, 0.997, 0.99)
    assert one[0].tolist() == pytest.approx([0.3]) and one[1].tolist() == pytest.approx([0.997])


def test_bandit_plays_every_arm_then_the_best_upper_bound():
    bandit = SlidingWindowUCB(3, window=4, beta=1.0, epsilon=0.0)
    for expected_arm, episode_return in [(0, 1.0), (1, 0.0), (2, 0.5)]:
        assert bandit.choose() == expected_arm
        bandit.observe(expected_arm, episode_return)
    # Scores: 1 + 1, 0 + 1, 0.5 + 1 -> arm 0.
    assert bandit.choose() == 0
    bandit.observe(0, 0.0)  # arm 0: mean 0.5 over 2, bonus sqrt(1/2) -> 1.207 < 1.5 of arm 2
    assert bandit.scores() == pytest.approx([0.5 + math.sqrt(0.5), 1.0, 1.5])
    assert bandit.choose() == 2
    bandit.observe(2, 0.5)  # the window of 4 drops (0, 1.0): arm 0 keeps (0, 0.0) only
    assert bandit.scores() == pytest.approx([1.0, 1.0, 0.5 + math.sqrt(0.5)])
    uniform = SlidingWindowUCB(3, window=4, epsilon=1.0, seed=1)
    for arm in range(3):
        uniform.observe(arm, float(arm))
    choices = [uniform.choose() for _ in range(300)]
    assert set(choices) == {0, 1, 2}
    restored = SlidingWindowUCB(3, window=4, epsilon=1.0)
    restored.load_state_dict(uniform.state_dict())
    assert [restored.choose() for _ in range(20)] == [uniform.choose() for _ in range(20)]



def test_best_arm_is_the_best_mean_over_all_windows_without_the_bonus():
    # Pooled: arm 0 -> 0 over 1, arm 1 -> 0.4 over 1, arm 2 -> (1 + 0) / 2 = 0.5; arm 3 never played.
    assert best_arm([[(0, 0.0), (2, 1.0)], [(2, 0.0), (1, 0.4)]], arms=4) == 2
    assert best_arm([[(3, 0.2), (1, 0.2)]], arms=4) == 1  # a tie goes to the lower beta
    assert best_arm([[(2, -1.0)]], arms=3) == 2  # an arm played beats arms never played, whatever its mean
    assert best_arm([[], []], arms=3) == 0


def test_evaluation_follows_the_member_it_is_given():
    network = small_agent(Agent57, Agent57Config).policy
    obs, start = torch.randn(3, *OBS), torch.ones(3, dtype=torch.bool)
    _, state = network.act(obs, network.initial_state(3), start, torch.zeros(3), member=2)
    assert state.member.tolist() == [2, 2, 2]
    _, state = network.act(obs, state, torch.tensor([True, False, False]), torch.zeros(3))
    assert state.member.tolist() == [0, 2, 2]  # a new episode takes the default member, 0
    with pytest.raises(ValueError, match=r"member must be in 0..2"):
        network.act(obs, state, start, torch.zeros(3), member=3)


def test_per_sequence_discounts_equal_each_sequence_on_its_own():
    torch.manual_seed(0)
    T, B, A = 6, 3, 2
    rewards, next_values = torch.randn(T, B), torch.randn(T, B)
    terminated = torch.zeros(T, B, dtype=torch.bool)
    terminated[3, 1] = True
    truncated = torch.zeros(T, B, dtype=torch.bool)
    gammas = torch.tensor([0.9, 0.5, 0.99])
    together = n_step_targets(rewards, next_values, terminated, truncated, gammas, 3)
    taken_q, next_q, policy, traces = torch.randn(T, B), torch.randn(T, B, A), torch.softmax(torch.randn(T, B, A), -1), torch.rand(T, B)
    retrace = retrace_targets(rewards, taken_q, next_q, policy, traces, terminated, truncated, gammas)
    for b, gamma in enumerate(gammas.tolist()):
        alone = n_step_targets(rewards[:, b:b + 1], next_values[:, b:b + 1], terminated[:, b:b + 1], truncated[:, b:b + 1], gamma, 3)
        assert torch.allclose(together[:, b:b + 1], alone)
        alone = retrace_targets(rewards[:, b:b + 1], taken_q[:, b:b + 1], next_q[:, b:b + 1], policy[:, b:b + 1],
                                traces[:, b:b + 1], terminated[:, b:b + 1], truncated[:, b:b + 1], gamma)
        assert torch.allclose(retrace[:, b:b + 1], alone)


def small_agent(cls, config_class, **options):
    torch.manual_seed(0)
    config = config_class(num_steps=4, sequence_length=4, burn_in=0, sequence_period=4, batch_size=4, min_replay=4,
                          replay_capacity=64, lstm_size=16, head_size=16, hidden_sizes=(16,), num_policies=3,
                          episodic_memory=16, **options)
    return cls(config, OBS, gym.spaces.Discrete(3))


def fill_replay(agent, chunks=3, num_envs=4):
    """Act ``chunks`` chunks of random observations and rewards through the agent's actor into its replay."""
    from voidrl.rollout.storage import RolloutStorage
    storage = RolloutStorage(agent.num_steps, num_envs, OBS, torch.float32, (), torch.long)
    state = agent.initial_state(num_envs)
    start, previous = torch.ones(num_envs, dtype=torch.bool), torch.zeros(num_envs)
    for _ in range(chunks):
        for t in range(agent.num_steps):
            obs = torch.randn(num_envs, *OBS)
            action, state = agent.act(obs, state, start, previous)
            storage.obs[t], storage.actions[t] = obs, action
            storage.rewards[t] = previous = torch.randn(num_envs)
            start = torch.zeros(num_envs, dtype=torch.bool)
        storage.length = agent.num_steps
        storage.last_obs.copy_(torch.randn(num_envs, *OBS))
        agent.observe(storage)


def test_sequences_carry_both_rewards_and_the_member():
    agent = small_agent(NGU, NGUConfig)
    fill_replay(agent)
    batch = agent.replay.sample(4)
    assert batch.rewards.shape == (4, 4, 2) and batch.previous_reward.shape == (4, 2)
    assert set(batch.start_state[2].tolist()) <= {0, 1, 2}
    assert (batch.rewards[..., 1] >= 0).all() and (batch.rewards[..., 1] > 0).any()


def test_the_q_loss_does_not_train_the_embedding_and_inverse_dynamics_does():
    agent = small_agent(NGU, NGUConfig)
    fill_replay(agent)
    novelty = agent.policy.novelty
    before = {name: p.detach().clone() for name, p in novelty.named_parameters()}
    heads_before = [p.detach().clone() for p in agent.policy.heads.parameters()]
    agent.learner.train_novelty = lambda batch: (0.0, 0.0)  # the Q step alone
    agent.learner.learn(agent.replay.sample(4))
    assert all(torch.equal(before[name], p) for name, p in novelty.named_parameters())
    assert any(not torch.equal(a, b) for a, b in zip(heads_before, agent.policy.heads.parameters()))
    del agent.learner.train_novelty
    agent.learner.learn(agent.replay.sample(4))
    changed = {name.split(".")[0] for name, p in novelty.named_parameters() if not torch.equal(before[name], p)}
    assert changed == {"embedding", "inverse_head", "rnd"}
    assert not any(name.startswith("rnd.target") for name, p in novelty.named_parameters() if not torch.equal(before[name], p))


def test_inverse_dynamics_loss_is_the_cross_entropy_of_the_taken_action():
    torch.manual_seed(0)
    module = NoveltyModule(OBS, 3, "mlp", (16,), embedding_size=4)
    obs, next_obs, actions = torch.randn(5, *OBS), torch.randn(5, *OBS), torch.tensor([0, 1, 2, 1, 0])
    inverse, _ = module.losses(obs, next_obs, actions)
    logits = module.inverse_head(module.embedding(obs), module.embedding(next_obs))
    expected = [-torch.log_softmax(logits[i], -1)[a].item() for i, a in enumerate(actions.tolist())]
    assert inverse.tolist() == pytest.approx(expected, rel=1e-5)


def test_a_novelty_module_saved_before_rnd_moved_into_its_own_part_loads_the_same():
    torch.manual_seed(0)
    module = NoveltyModule(OBS, 3, "mlp", (16,), embedding_size=4)
    module.rnd.observation_stats.update(torch.randn(50, *OBS))
    module.error_stats.update(torch.rand(50))
    saved = module.state_dict()
    old = {key.replace("rnd.target.", "rnd_target.").replace("rnd.predictor.", "rnd_predictor."): value
           for key, value in saved.items() if key != "rnd._extra_state"}
    old["_extra_state"] = saved["_extra_state"] | saved["rnd._extra_state"]  # the layout of the earlier checkpoints
    loaded = NoveltyModule(OBS, 3, "mlp", (16,), embedding_size=4)
    loaded.load_state_dict(old)
    for key, value in loaded.state_dict().items():
        if key.endswith("_extra_state"):
            assert {name: {k: v.tolist() for k, v in stats.items()} for name, stats in value.items()} == {
                name: {k: v.tolist() for k, v in stats.items()} for name, stats in saved[key].items()}
        else:
            assert torch.equal(value, saved[key]), key
    obs = torch.randn(4, *OBS)
    assert torch.equal(loaded.rnd.errors(obs), module.rnd.errors(obs))


@pytest.mark.parametrize("value_rescaling", [False, True])
def test_agent57_acts_on_q_extrinsic_plus_beta_q_intrinsic(value_rescaling):
    agent = small_agent(Agent57, Agent57Config, value_rescaling=value_rescaling)
    network = agent.policy
    q = torch.randn(5, 3, 2, 3)
    index = torch.tensor([0, 1, 2])
    beta = network.betas[index].view(3, 1)
    if value_rescaling:
        expected = value_rescale(inverse_value_rescale(q[..., 0, :]) + beta * inverse_value_rescale(q[..., 1, :]))
    else:
        expected = q[..., 0, :] + beta * q[..., 1, :]
    assert torch.allclose(network.combine(q, index), expected, atol=1e-5)
    assert torch.allclose(network.combine(q, torch.zeros(3, dtype=torch.long)), q[..., 0, :], atol=1e-5)  # beta_0 = 0: the task alone


@pytest.mark.parametrize("intrinsic_terminates", [True, False])
def test_agent57s_intrinsic_value_ends_at_a_termination_only_if_asked(intrinsic_terminates):
    agent = small_agent(Agent57, Agent57Config, intrinsic_terminates=intrinsic_terminates, value_rescaling=False)
    fill_replay(agent)
    batch = agent.replay.sample(4)
    batch.terminated[:], batch.truncated[:] = False, False
    batch.terminated[-1] = True  # every sequence's last step ends its episode
    acting_q, target_q = torch.randn(5, 4, 3), torch.randn(5, 4, 2, 3)
    index = batch.start_state[2]
    targets = agent.learner.head_targets(acting_q, target_q, index, batch)
    extrinsic, intrinsic = batch.rewards[-1].unbind(-1)
    bootstrap = target_q[-1, :, 1].gather(-1, acting_q[-1].argmax(-1, keepdim=True)).squeeze(-1)  # q_i(s', greedy a')
    assert torch.allclose(targets[-1, :, 0], extrinsic)  # the task's value always ends there
    expected = intrinsic if intrinsic_terminates else intrinsic + agent.policy.gammas[index] * bootstrap
    assert torch.allclose(targets[-1, :, 1], expected, atol=1e-6)


@pytest.mark.slow
def test_ngu_and_agent57_train_evaluate_and_resume_with_their_bandits(tmp_path, capsys):
    for algo in ("ngu", "agent57"):
        run = ["train", algo, "--env", "MiniGrid-Empty-5x5-v0", "--preset", "minigrid", "--num-envs", "4", "--min-replay", "16",
               "--torch-threads", "1", "--no-progress", "--run-dir", str(tmp_path / algo), "--seed", "3"]
        assert main([*run, "--steps", "640"]) == 0
        checkpoint = load_checkpoint(tmp_path / algo / "checkpoint.pt")
        bandits = checkpoint["algorithm"]["actors"][0]["bandits"]
        assert (bandits is None) == (algo == "ngu")
        policy = checkpoint["algorithm"]["policy"]
        statistics = policy["novelty._extra_state"] | policy["novelty.rnd._extra_state"]  # RND's normalisers and d_m^2
        assert {name: float(stats["count"]) > 0 for name, stats in statistics.items()} == {
            "observation_stats": True, "error_stats": True, "distance_stats": True}
        if bandits is not None:
            assert len(bandits) == 4 and sum(len(b["history"]) for b in bandits) > 0
        assert main([*run, "--steps", "960", "--resume"]) == 0
        capsys.readouterr()
        checkpoint_path = str(tmp_path / algo / "checkpoint.pt")
        assert main(["eval", "--checkpoint", checkpoint_path, "--episodes", "2"]) == 0
        bandits = load_checkpoint(checkpoint_path)["algorithm"]["actors"][0]["bandits"]
        member = 0 if bandits is None else best_arm([bandit["history"] for bandit in bandits], arms=8)
        assert f"member j = {member}: beta" in capsys.readouterr().out
        assert main(["eval", "--checkpoint", checkpoint_path, "--episodes", "1", "--member", "7"]) == 0
        assert "member j = 7: beta 0.3" in capsys.readouterr().out  # the last member, beta = intrinsic_coef
        for extra, message in [(["--member", "8"], "--member must be best or an integer in 0..7, got '8'"),
                               (["--sampled"], f"--sampled applies to policy-gradient agents; {algo} acts greedily")]:
            assert main(["eval", "--checkpoint", checkpoint_path, *extra]) == 2
            assert message in capsys.readouterr().err
    assert main(["eval", "--checkpoint", str(tmp_path / "ngu" / "checkpoint.pt"), "--member", "best"]) == 2
    assert "--member best needs the bandits of an agent57 run" in capsys.readouterr().err
    metrics = (tmp_path / "agent57" / "metrics.csv").read_text().splitlines()
    header = metrics[0].split(",")
    assert {"ngu/intrinsic", "ngu/episodic", "ngu/modulator", "ngu/memory_size", "train/inverse_dynamics_loss",
            "train/q_extrinsic_taken", "train/q_intrinsic_taken"} <= set(header)


@pytest.mark.parametrize("extra, message", [
    (["--num-policies", "0"], "num_policies must be a positive integer"),
    (["--gamma-min", "0.999"], "gamma_min must be at most gamma (0.997)"),
    (["--meta-controller", "ucb"], "meta_controller must be one of"),
    (["--no-intrinsic-terminates"], "intrinsic_terminates=False needs split_values=True"),
])
def test_bad_ngu_options_are_one_line_errors(tmp_path, capsys, extra, message):
    assert main(["train", "ngu", "--no-progress", "--run-dir", str(tmp_path / "bad"), *extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err
    assert not (tmp_path / "bad").exists()


def test_the_intrinsic_coef_keeps_its_old_name_as_a_flag_and_in_stored_configs(tmp_path, capsys):
    """beta was ``intrinsic_weight`` before the reward coefficients took one name (``extrinsic_coef``, ``intrinsic_coef``)."""
    import voidrl
    from voidrl.config import TrainConfig

    stored = voidrl.make_config("ngu", env="MiniGrid-Empty-5x5-v0").to_dict()
    stored["algo_config"].pop("intrinsic_coef")
    stored["algo_config"]["intrinsic_weight"] = 0.2  # a config.json written before the rename
    assert TrainConfig.from_dict(stored).algo_config.intrinsic_coef == 0.2
    for flag in ("--intrinsic-coef", "--intrinsic-weight"):
        assert main(["train", "ngu", flag, "-0.5", "--no-progress", "--run-dir", str(tmp_path / "bad")]) == 2
        assert "intrinsic_coef must be" in capsys.readouterr().err and not (tmp_path / "bad").exists()
