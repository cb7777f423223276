"""The APT plug-in adds a reward stream beside the task's and changes nothing else."""

import math

import gymnasium as gym
import pytest
import torch

import voidrl
from voidrl.intrinsic.apt import APTConfig, APTReward
from voidrl.io.checkpoint import load_checkpoint
from voidrl.rollout import RolloutStorage
from voidrl.rollout.collector import Transition

OBS = (4, 10, 10)


def filled_rollout(T=6, N=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    storage = RolloutStorage(T, N, OBS, torch.uint8, (), torch.long)
    storage.obs.copy_(torch.randint(0, 2, storage.obs.shape, generator=g, dtype=torch.uint8) * 255)
    storage.last_obs.copy_(torch.randint(0, 2, storage.last_obs.shape, generator=g, dtype=torch.uint8) * 255)
    storage.rewards.copy_(torch.randn(T, N, generator=g))
    return storage


def brute_force_rewards(plugin, storage, k, running_mean, clip=0.0, observations=None, own_environment=False):
    """Particle i of the time-major flattened rollout is environment i % N's; ``own_environment``: its neighbours
    only among that environment's particles."""
    observations = storage.next_obs(0, storage.num_steps) if observations is None else observations
    with torch.no_grad():
        z = plugin.encoder(observations.flatten(0, 1).float() / 255.0)
    num_envs = storage.num_envs
    rewards = []
    for i in range(z.shape[0]):
        candidates = [j for j in range(z.shape[0]) if j != i and (not own_environment or j % num_envs == i % num_envs)]
        distances = sorted(float((z[i] - z[j]).norm()) for j in candidates)[:k]
        rewards.append(math.log(1.0 + sum(max(d / running_mean - clip, 0.0) for d in distances) / k))
    return torch.tensor(rewards).view(storage.rewards.shape)


def test_reward_free_rewrite_matches_a_brute_force_particle_reward():
    torch.manual_seed(0)
    plugin = APTReward(APTConfig(knn_k=3), OBS)
    storage = filled_rollout()
    task = storage.rewards.clone()
    rewards, metrics = plugin.intrinsic_rewards(storage)
    expected = brute_force_rewards(plugin, storage, 3, metrics["apt/knn_distance_running_mean"])
    torch.testing.assert_close(rewards, expected, rtol=1e-4, atol=1e-5)
    assert torch.equal(storage.rewards, task)  # the task rewards are left alone
    assert metrics["apt/knn_distance_running_mean"] == metrics["apt/knn_distance_raw"]  # first batch: mean of itself


def test_the_particle_return_of_each_training_episode_runs_across_rollouts_and_resumes():
    torch.manual_seed(0)
    plugin = APTReward(APTConfig(knn_k=3), OBS)
    first, second = filled_rollout(seed=1), filled_rollout(seed=2)
    first.terminated[2, 0] = True  # env 0's episode ends in the first rollout, env 1's in the second
    second.truncated[1, 1] = True
    rewards, metrics = plugin.intrinsic_rewards(first)
    assert metrics["apt/episode_particle_return"] == pytest.approx(rewards[:3, 0].sum().item())
    resumed = APTReward(APTConfig(knn_k=3), OBS)
    resumed.load_state_dict(plugin.state_dict())
    later, metrics = resumed.intrinsic_rewards(second)
    assert metrics["apt/episode_particle_return"] == pytest.approx(rewards[:, 1].sum().item() + later[:2, 1].sum().item())
    _, metrics = resumed.intrinsic_rewards(filled_rollout(seed=3))
    assert "apt/episode_particle_return" not in metrics  # no episode ended


def test_reference_variant_clips_distances_and_scores_the_current_observations():
    torch.manual_seed(0)
    plugin = APTReward(APTConfig(knn_k=12, knn_clip=0.5, reward_observation="current"), OBS)
    storage = filled_rollout()
    observations = storage.obs.clone()
    rewards, metrics = plugin.intrinsic_rewards(storage)
    running_mean = metrics["apt/knn_distance_running_mean"]
    expected = brute_force_rewards(plugin, storage, 12, running_mean, clip=0.5, observations=observations)
    torch.testing.assert_close(rewards, expected, rtol=1e-4, atol=1e-5)
    unclipped_next = brute_force_rewards(plugin, storage, 12, running_mean)
    assert not torch.allclose(rewards, unclipped_next, atol=1e-3)


def test_the_environment_scope_seeks_each_particles_neighbours_in_its_own_environment_only():
    torch.manual_seed(0)
    plugin = APTReward(APTConfig(knn_k=3, knn_scope="environment"), OBS)
    storage = filled_rollout(T=7, N=3)
    rewards, metrics = plugin.intrinsic_rewards(storage)
    running_mean = metrics["apt/knn_distance_running_mean"]
    expected = brute_force_rewards(plugin, storage, 3, running_mean, own_environment=True)
    torch.testing.assert_close(rewards, expected, rtol=1e-4, atol=1e-5)
    assert not torch.allclose(rewards, brute_force_rewards(plugin, storage, 3, running_mean), atol=1e-3)


def test_training_rewards_weigh_task_and_intrinsic_rewards():
    torch.manual_seed(0)
    storage = filled_rollout()
    assert storage.training_rewards() is storage.rewards  # no plug-in: the task rewards
    plugin = APTReward(APTConfig(extrinsic_coef=0.5, intrinsic_coef=2.0), OBS)
    rewards, _ = plugin.intrinsic_rewards(storage)
    storage.intrinsic_rewards.copy_(rewards)
    storage.reward_coefs = plugin.reward_coefs
    torch.testing.assert_close(storage.training_rewards(), 0.5 * storage.rewards + 2.0 * rewards)
    storage.reward_coefs = (1.0, 0.0)
    assert torch.equal(storage.training_rewards(), storage.rewards)


def test_contrastive_updates_start_after_the_configured_steps_and_train_the_encoder():
    torch.manual_seed(0)
    plugin = APTReward(APTConfig(contrastive_start=7, contrastive_batch_size=8), OBS)
    before = [p.detach().clone() for p in plugin.encoder.parameters()]
    with torch.no_grad():  # as inside the collector
        for _ in range(2):
            plugin.observe(torch.randint(0, 256, (3, *OBS), dtype=torch.uint8))
    assert all(torch.equal(a, b) for a, b in zip(before, plugin.encoder.parameters()))
    with torch.no_grad():
        plugin.observe(torch.randint(0, 256, (3, *OBS), dtype=torch.uint8))
    assert any(not torch.equal(a, b) for a, b in zip(before, plugin.encoder.parameters()))
    assert len(plugin.buffer) == 9


@pytest.mark.slow
def test_reward_free_training_with_ppg_checkpoints_the_plugin(tmp_path):
    voidrl.train("ppg", env="MinAtar/Breakout-v1", steps=2048, run_dir=str(tmp_path), progress=False, intrinsic="apt",
                 contrastive_start=128, contrastive_batch_size=32, num_envs=4, num_steps=64, policy_iterations=2)
    state = load_checkpoint(tmp_path / "checkpoint.pt")["intrinsic"]
    assert state["env_steps"] == 2048 and int(state["buffer"]["total"]) == 2048
    header = (tmp_path / "metrics.csv").read_text().splitlines()[0]
    for column in ("apt/contrastive_loss", "apt/particle_reward", "apt/knn_distance_raw", "apt/knn_distance_running_mean"):
        assert column in header


def test_shift_is_proportionate_to_the_frame_size():
    assert APTReward(APTConfig(), (4, 84, 84)).shift_pad == 4
    assert APTReward(APTConfig(), OBS).shift_pad == 1


def test_fractional_update_ratio_spaces_the_contrastive_updates_out():
    torch.manual_seed(0)
    plugin = APTReward(APTConfig(contrastive_start=0, contrastive_batch_size=4, contrastive_updates_per_step=0.25), OBS)
    calls = []
    plugin.contrastive_update = lambda: calls.append(plugin.env_steps)
    for _ in range(10):
        plugin.observe(torch.zeros(3, *OBS, dtype=torch.uint8))
    assert calls == [12, 24]  # one update every 4 vector steps of 3 envs
    plugin.config.contrastive_updates_per_step = 2.0
    plugin.observe(torch.zeros(3, *OBS, dtype=torch.uint8))
    assert calls == [12, 24, 33, 33]


def test_chunked_contrastive_update_gives_the_same_gradient_as_one_pass():
    grads = []
    for chunk_size in (None, 5):
        torch.manual_seed(0)
        plugin = APTReward(APTConfig(contrastive_batch_size=16, contrastive_chunk_size=chunk_size), OBS)
        plugin.buffer.add(torch.randint(0, 256, (40, *OBS), generator=torch.Generator().manual_seed(1), dtype=torch.uint8))
        plugin.parameters.optimizer.step = lambda: grads.append(plugin.parameters.flat.grad.clone())
        plugin.contrastive_update()
    assert grads[0].abs().sum() > 0
    torch.testing.assert_close(grads[1], grads[0], rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("field,value", [("knn_clip", -0.1), ("reward_observation", "previous"), ("knn_scope", "game")])
def test_bad_variant_options_are_refused_by_name(field, value):
    with pytest.raises(ValueError, match=field):
        APTConfig(**{field: value}).validate()


def test_inverse_dynamics_needs_consecutive_steps_and_discrete_actions():
    with pytest.raises(ValueError, match="inverse_dynamics_coef needs representation_stride 1"):
        APTConfig(inverse_dynamics_coef=1.0, representation_stride=2).validate()
    with pytest.raises(ValueError, match="inverse_dynamics_coef needs a Discrete action space.*Box"):
        APTReward(APTConfig(inverse_dynamics_coef=1.0), OBS, action_space=gym.spaces.Box(-1.0, 1.0, (2,)))
    with pytest.raises(ValueError, match="inverse_dynamics_coef must be >= 0, got -1.0"):
        APTConfig(inverse_dynamics_coef=-1.0).validate()


def test_each_step_records_the_action_that_reached_its_observation_unless_a_new_episode_began():
    plugin = APTReward(APTConfig(inverse_dynamics_coef=1.0, contrastive_start=10**9), OBS, action_space=gym.spaces.Discrete(3))
    frames = [torch.randint(0, 256, (2, *OBS), generator=torch.Generator().manual_seed(step), dtype=torch.uint8) for step in range(4)]
    done = torch.zeros(2, dtype=torch.bool)
    with torch.no_grad():
        plugin.on_step(Transition(frames[0], torch.tensor([1, 2]), frames[1], done, done))  # nothing stored before it
        plugin.on_step(Transition(frames[1], torch.tensor([0, 1]), frames[2], done, done))
        reset = torch.stack([frames[2][0], frames[3][1]])  # env 1 acts on a new episode's first observation
        plugin.on_step(Transition(reset, torch.tensor([2, 2]), frames[3], done, done))
    arrivals = plugin.buffer.state_dict()["staging_arrivals"]
    assert arrivals.tolist() == [[-1, -1], [0, 1], [2, -1]]


def test_the_inverse_dynamics_term_is_the_cross_entropy_of_the_latents_and_trains_its_head():
    torch.manual_seed(0)
    plugin = APTReward(APTConfig(inverse_dynamics_coef=0.5, contrastive_batch_size=8), OBS, action_space=gym.spaces.Discrete(3))
    generator = torch.Generator().manual_seed(1)
    for step in range(5):
        plugin.buffer.add(torch.randint(0, 256, (3, *OBS), generator=generator, dtype=torch.uint8),
                          None if step == 0 else torch.randint(0, 3, (3,), generator=generator))
    torch.manual_seed(2)
    before, actions, after = plugin.buffer.sample_transitions(8)
    with torch.no_grad():
        latents = [plugin.encoder(frames.float() / 255) for frames in (before, after)]
        expected = torch.nn.functional.cross_entropy(plugin.inverse_head(*latents), actions)
    head = [p.detach().clone() for p in plugin.inverse_head.parameters()]
    torch.manual_seed(2)
    frames = plugin.buffer.sample(8)
    metrics = plugin.contrastive_step(frames, plugin.draw_views(8), (before, actions, after))
    torch.testing.assert_close(metrics["apt/inverse_dynamics_loss"], expected)
    assert 0 <= metrics["apt/inverse_dynamics_accuracy"] <= 1 and "apt/contrastive_loss" in metrics
    assert all(not torch.equal(a, b) for a, b in zip(head, plugin.inverse_head.parameters()))


def test_the_inverse_dynamics_gradient_is_the_contrastive_one_plus_the_coefficient_times_its_own():
    grads = {}
    for coef in (0.0, 1.0, 3.0):
        torch.manual_seed(0)
        plugin = APTReward(APTConfig(inverse_dynamics_coef=coef or 1.0, contrastive_batch_size=8), OBS,
                           action_space=gym.spaces.Discrete(3))
        plugin.config.inverse_dynamics_coef = coef
        generator = torch.Generator().manual_seed(1)
        for step in range(5):
            plugin.buffer.add(torch.randint(0, 256, (3, *OBS), generator=generator, dtype=torch.uint8),
                              None if step == 0 else torch.randint(0, 3, (3,), generator=generator))
        torch.manual_seed(2)
        transitions = plugin.buffer.sample_transitions(8)
        plugin.parameters.optimizer.step = lambda: grads.__setitem__(coef, plugin.parameters.flat.grad.clone())
        plugin.contrastive_step(plugin.buffer.sample(8), plugin.draw_views(8), transitions)
    encoder_size = sum(p.numel() for p in plugin.encoder.parameters())
    own = grads[1.0] - grads[0.0]
    assert own[:encoder_size].abs().sum() > 0  # the inverse-dynamics loss reaches the encoder
    torch.testing.assert_close(grads[3.0], grads[0.0] + 3 * own, rtol=1e-4, atol=1e-6)


def test_a_state_without_the_inverse_dynamics_head_is_refused():
    state = APTReward(APTConfig(), OBS).state_dict()
    with pytest.raises(ValueError, match="no inverse-dynamics head"):
        APTReward(APTConfig(inverse_dynamics_coef=1.0), OBS, action_space=gym.spaces.Discrete(3)).load_state_dict(state)
