"""Where PPO's time from pixels goes on a CPU: the CNN's update per sample at 64 and 96 px, in channels-last and
NCHW layout, acting on one frame, and rendering one frame.

- update: PPO's own update (the ``mujoco-pixels`` preset's schedule: minibatches of 64, one epoch here) over a
  synthetic rollout of 1,024 stacks of 3 RGB frames, in CPU seconds of this process per sample, so that other
  jobs on the machine count less than in wall time; the settings take turns, ``--repeats`` times each.
- NCHW: ``PixelBody`` with its convolutions in the default layout and frames fed as they are stored (its own
  forward converts them to channels-last); the reference the channels-last layout is measured against.
- acting: one forward pass and a sampled action for a single stack of frames, as the collector does each step.
- rendering: HalfCheetah-v5, one env step and one frame (``FrameRenderer``), per frame.

    python benchmarks/bench_pixels.py --repeats 3
"""

from __future__ import annotations

import argparse
import statistics
import time
import types

import gymnasium as gym
import numpy as np
import torch

from voidrl.algos.ppo import PPO
from voidrl.envs.gym_backend import make_rendering_env
from voidrl.envs.factory import route_mujoco_warnings
from voidrl.nets.actor_critic import first_step_inputs
from voidrl.nets.bodies import PixelBody
from voidrl.rollout.storage import RolloutStorage
from voidrl.training.presets import make_config

ROLLOUT = 1024
STACK = 9  # 3 RGB frames
ACTIONS = gym.spaces.Box(-1.0, 1.0, (6,), np.float32)


def nchw_forward(body: PixelBody, obs: torch.Tensor) -> torch.Tensor:
    """``PixelBody.forward`` without its change of layout."""
    x = obs.float() * (1.0 / 255.0)
    if body.offset:
        x = x + body.offset
    return body.fc(body.convs(x))


def build(network: str, size: int, channels_last: bool) -> PPO:
    config = make_config("ppo", "mujoco-pixels", env="HalfCheetah-v5", network=network, epochs=1, num_steps=ROLLOUT)
    torch.manual_seed(0)
    algo = PPO(config.algo_config, (STACK, size, size), ACTIONS)
    if not channels_last:
        for body in (module for module in algo.policy.modules() if isinstance(module, PixelBody)):
            body.convs.to(memory_format=torch.contiguous_format)
            body.forward = types.MethodType(nchw_forward, body)
    return algo


def rollout(size: int) -> RolloutStorage:
    storage = RolloutStorage(ROLLOUT, 1, (STACK, size, size), torch.uint8, ACTIONS.shape, torch.float32)
    generator = torch.Generator().manual_seed(0)
    storage.obs.copy_(torch.randint(0, 256, storage.obs.shape, dtype=torch.uint8, generator=generator))
    storage.actions.normal_(generator=generator)
    storage.rewards.normal_(generator=generator)
    storage.log_probs.fill_(-8.0)
    return storage


def update_ms_per_sample(algo: PPO, storage: RolloutStorage) -> float:
    started = time.process_time()
    algo.update(storage, 0.0)
    return 1e3 * (time.process_time() - started) / ROLLOUT


@torch.no_grad()
def acting_ms(algo: PPO, storage: RolloutStorage, steps: int = 200) -> float:
    obs = storage.obs[0]
    started = time.process_time()
    for _ in range(steps):
        algo.policy(*first_step_inputs(algo.policy, obs))[0].sample()
    return 1e3 * (time.process_time() - started) / steps


def rendering_ms(size: int, steps: int = 300) -> float:
    env, renderer = make_rendering_env("HalfCheetah-v5", size)
    env.reset(seed=0)
    action = np.zeros(env.action_space.shape)
    started = time.process_time()
    for _ in range(steps):
        env.step(action)
        renderer.frame()
    seconds = time.process_time() - started
    renderer.close()
    env.close()
    return 1e3 * seconds / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--networks", nargs="+", default=["nature", "dqn2013"])
    parser.add_argument("--sizes", nargs="+", type=int, default=[64, 96])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    route_mujoco_warnings()
    settings = [(network, size, layout) for network in args.networks for size in args.sizes for layout in (True, False)]
    storages = {size: rollout(size) for size in args.sizes}
    update: dict[tuple, list[float]] = {setting: [] for setting in settings}
    acting: dict[tuple, list[float]] = {setting: [] for setting in settings}
    for _ in range(args.repeats):
        for setting in settings:
            network, size, channels_last = setting
            algo = build(network, size, channels_last)
            algo.update(storages[size], 0.0)  # warm-up: oneDNN picks its kernels
            update[setting].append(update_ms_per_sample(algo, storages[size]))
            acting[setting].append(acting_ms(algo, storages[size]))
    print(f"one torch thread; CPU ms, median of {args.repeats} (range)\n")
    print("| network | frames | layout | update, per sample and epoch | acting, per step |\n|---|---|---|---:|---:|")
    for setting in settings:
        network, size, channels_last = setting
        ranges = [f"{statistics.median(times):.3f} ({min(times):.3f}-{max(times):.3f})" for times in (update[setting], acting[setting])]
        print(f"| {network} | {size}x{size} | {'channels-last' if channels_last else 'NCHW'} | {ranges[0]} | {ranges[1]} |")
    print("\n| rendering HalfCheetah-v5 | CPU ms per frame (env step + render), median |\n|---|---:|")
    for size in args.sizes:
        times = [rendering_ms(size) for _ in range(args.repeats)]
        print(f"| {size}x{size} | {statistics.median(times):.2f} ({min(times):.2f}-{max(times):.2f}) |")


if __name__ == "__main__":
    main()
