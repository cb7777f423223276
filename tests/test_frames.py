"""StackedFrames rebuilds every frame stack exactly from one new frame per state."""

import torch

from voidrl.envs import EnvConfig, make_env
from voidrl.rollout.frames import compact_copy, gather_across


def synthetic_stacks(T=12, N=3, K=4, size=5, breaks=((0, 5), (2, 1), (2, 2), (1, 11)), seed=0):
    """Stacks built like a frame-stacking env: shift in one new frame per step, restart at ``breaks``."""
    g = torch.Generator().manual_seed(seed)
    obs = torch.zeros(T, N, K, size, size, dtype=torch.uint8)
    for n in range(N):
        stack = torch.randint(0, 256, (K, size, size), generator=g, dtype=torch.uint8)
        for t in range(T):
            if t > 0:
                if (n, t) in breaks:
                    stack = torch.randint(0, 256, (K, size, size), generator=g, dtype=torch.uint8)
                else:
                    stack = torch.cat([stack[1:], torch.randint(0, 256, (1, size, size), generator=g, dtype=torch.uint8)])
            obs[t, n] = stack
    return obs


def test_gather_rebuilds_every_state_across_breaks():
    obs = synthetic_stacks()
    store = compact_copy(obs)
    assert store.stacks.shape[0] == 3 + 4  # one per env at t = 0, one per break
    flat = obs.reshape(-1, *obs.shape[2:])
    assert torch.equal(store.gather(torch.arange(36)), flat)
    shuffled = torch.randperm(36)
    assert torch.equal(store.gather(shuffled), flat[shuffled])


def test_stores_gather_across_rollouts_and_save_memory():
    rollouts = [synthetic_stacks(seed=s) for s in range(3)]
    stores = [compact_copy(obs) for obs in rollouts]
    everything = torch.cat([o.reshape(-1, *o.shape[2:]) for o in rollouts])
    index = torch.randperm(everything.shape[0])
    assert torch.equal(gather_across(stores, index), everything[index])
    kept = sum(s.frames.nelement() + s.stacks.nelement() for s in stores)
    assert kept < everything.nelement() / 2


def test_real_atari_rollout_round_trip():
    env = make_env("ALE/MsPacman-v5", EnvConfig(num_envs=2))
    obs = [env.reset(0)]
    for t in range(200):
        obs.append(env.step(torch.randint(0, 18, (2,))).obs)
    obs = torch.stack(obs)
    store = compact_copy(obs)
    assert torch.equal(store.gather(torch.arange(obs.shape[0] * 2)), obs.reshape(-1, 4, 84, 84))
    assert store.stacks.shape[0] < 20  # chains break only at starts and resets
