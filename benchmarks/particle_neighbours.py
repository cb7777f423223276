"""Where a rollout's particles find their k nearest neighbours in APT's latent space (Atari, pre-trained runs).

APT rewards each of a rollout's states by the mean distance to its k nearest neighbours among the rollout's other
states. Two things decide what that reward pays for: whether the neighbours are the state's own moments before and
after (then it measures how fast one game changes, not how new a place is) and whether the latent space sorts states
by where the player is (then novelty is a new place, not a new arrangement of ghosts and pellets). This plays one
training-sized rollout with a checkpoint's policy (sampled actions, the run's environments), embeds the next
observations with the checkpoint's APT encoder as ``intrinsic_rewards`` does, and prints:

- the share of the k neighbours from the same environment, and from the same environment within |dt| <= w steps
  (chance: 1 / N environments);
- the L1 distance in screen pixels (emulator RAM, ``PLAYER_POSITION_RAM``) between a state's player position and its
  neighbours', against k states drawn at random from the same rollout.

    python benchmarks/particle_neighbours.py benchmarks/results/mspacman-2026-11-28-knn-scope/pretrain/pretrained-weights.pt
"""

from __future__ import annotations

import argparse

import torch

from voidrl.configs.apt import APTConfig
from voidrl.envs.atari import PLAYER_POSITION_RAM
from voidrl.envs.roms import rom_name
from voidrl.intrinsic.apt import APTReward
from voidrl.io.checkpoint import load_checkpoint
from voidrl.training.agent import Agent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoint", help="a pre-training's checkpoint or exported weights (with the APT encoder)")
    parser.add_argument("--steps", type=int, default=None, help="rollout length (default: the run's num_steps)")
    parser.add_argument("--skip", type=int, default=64, help="steps left out of the position figures at the start, "
                        "where every game plays the same intro (default: 64)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    agent = Agent.load(args.checkpoint)
    saved = load_checkpoint(args.checkpoint)
    if saved["config"].get("intrinsic_config") is None or "encoder" not in saved.get("intrinsic", {}):
        raise SystemExit(f"{args.checkpoint} holds no APT encoder (not an APT pre-training)")
    config = APTConfig(**saved["config"]["intrinsic_config"])
    addresses = PLAYER_POSITION_RAM.get(rom_name(agent.config.run.env))
    if addresses is None:
        raise SystemExit(f"the player's RAM position is not known for {agent.config.run.env}")
    num_envs, steps = agent.config.env.num_envs, args.steps or agent.config.algo_config.num_steps
    if not 0 <= args.skip < steps:
        raise SystemExit(f"--skip must be in [0, {steps}) for a rollout of {steps} steps, got {args.skip}")

    env = agent.make_env(num_envs, evaluation=False, ram=True)
    plugin = APTReward(config, tuple(env.single_observation_space.shape))
    plugin.encoder.load_state_dict(saved["intrinsic"]["encoder"])
    plugin.encoder.eval()
    memory = agent.memory(num_envs, False, None)
    frames, positions = [], []
    obs = env.reset(args.seed)
    for _ in range(steps):
        step = env.step(agent.act_with(memory, obs))
        memory.after_step(step)
        frames.append(step.obs)
        positions.append(torch.as_tensor(step.ram[:, list(addresses[:2])]).float())  # x and y, not the room
        obs = step.obs
    env.close()

    with torch.no_grad():
        latents = torch.cat([plugin.encoder(torch.stack(frames[t : t + 8]).flatten(0, 1).float() / 255.0)
                             for t in range(0, steps, 8)])
    distances = torch.cdist(latents, latents)
    distances.fill_diagonal_(float("inf"))
    neighbours = distances.topk(config.knn_k, largest=False).indices  # [B, k], index t * N + n
    index = torch.arange(steps * num_envs)
    time, env_of = index // num_envs, index % num_envs
    same_env = env_of[neighbours] == env_of[:, None]
    dt = (time[neighbours] - time[:, None]).abs()
    print(f"{args.checkpoint}: {num_envs} envs x {steps} steps, k = {config.knn_k}")
    print(f"neighbours from the same environment: {same_env.float().mean():.3f} (chance {1 / num_envs:.3f})")
    for window in (1, 2, 4, 8, 16):
        print(f"  same environment and |dt| <= {window}: {(same_env & (dt <= window)).float().mean():.3f}")
    where = torch.stack(positions).flatten(0, 1)
    later = time >= args.skip
    to_neighbours = (where[neighbours] - where[:, None]).abs().sum(-1)[later]
    to_random = (where[torch.randint(len(where), neighbours.shape)] - where[:, None]).abs().sum(-1)[later]
    print(f"player position distance (L1, pixels), steps >= {args.skip}: to the latent neighbours median "
          f"{to_neighbours.median():.1f} (mean {to_neighbours.mean():.1f}), to random states of the rollout median "
          f"{to_random.median():.1f} (mean {to_random.mean():.1f}); at the same position: "
          f"{(to_neighbours == 0).float().mean():.3f} against {(to_random == 0).float().mean():.3f}")


if __name__ == "__main__":
    main()
