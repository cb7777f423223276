"""Particle rewards that mean something: on real Ms. Pac-Man frames, rarely visited states earn more."""

import torch

from voidrl.envs.factory import EnvConfig, make_env
from voidrl.intrinsic.apt import APTConfig, APTReward
from voidrl.rollout import RolloutStorage

ENVS, OFTEN_STEPS, PLANT_AFTER = 8, 16, 300


def ms_pacman_rollout() -> RolloutStorage:
    """16 steps of the opening (every env sees the same screens) and, planted in the last step, the
    frames of each env 300 random steps later (pellets eaten, ghosts and Ms. Pac-Man elsewhere)."""
    env = make_env("ALE/MsPacman-v5", EnvConfig(num_envs=ENVS))
    generator = torch.Generator().manual_seed(0)
    obs = env.reset(0)
    storage = RolloutStorage(OFTEN_STEPS + 1, ENVS, tuple(obs.shape[1:]), torch.uint8, (), torch.long)
    for step in range(PLANT_AFTER):
        if step < OFTEN_STEPS:
            storage.obs[step] = obs
        obs = env.step(torch.randint(env.single_action_space.n, (ENVS,), generator=generator)).obs
    storage.obs[OFTEN_STEPS] = obs
    env.close()
    return storage


def particle_rewards(plugin: APTReward, storage: RolloutStorage) -> torch.Tensor:
    return plugin.intrinsic_rewards(storage)[0]


def test_planted_novel_frames_get_higher_particle_reward_than_the_often_visited_opening():
    torch.manual_seed(0)
    storage = ms_pacman_rollout()
    plugin = APTReward(APTConfig(knn_k=5, reward_observation="current"), tuple(storage.obs.shape[2:]))
    rewards = particle_rewards(plugin, storage)
    often, planted = rewards[:OFTEN_STEPS], rewards[OFTEN_STEPS]
    # a planted frame can land back on the opening (its env lost its last life and restarted)
    assert (planted > often.quantile(0.9)).float().mean() >= 0.75, (planted, often.quantile(0.9))
    assert planted.mean() > often.mean() + 0.5, (planted.mean(), often.mean())

    with torch.no_grad():  # a collapsed encoder (one latent for every frame) cannot tell them apart
        plugin.encoder.head[0].weight.zero_()
    collapsed = particle_rewards(plugin, storage)
    assert torch.allclose(collapsed[OFTEN_STEPS], collapsed[:OFTEN_STEPS].mean(0), atol=1e-5)
