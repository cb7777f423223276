"""Issue 63: how the features of a Q-network's torso started from the pre-trained policy body (``--init-parts
policy_body`` / ``policy_convs``) differ from a fresh torso's on Ms. Pac-Man frames: the per-unit standard deviation
over frames of random play, the share of units that stay at zero, and the spread of the fresh Q-head's initial values.

    python benchmarks/torso_features.py [--weights WEIGHTS] [--frames 120]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import gymnasium as gym
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from voidrl.algos.r2d2 import R2D2, R2D2Config  # noqa: E402
from voidrl.configs.env import EnvConfig  # noqa: E402
from voidrl.envs.factory import make_env  # noqa: E402
from voidrl.nets.parts import load_parts  # noqa: E402

WEIGHTS = "benchmarks/results/mspacman-2026-11-28-knn-scope/pretrain/pretrained-weights.pt"


def random_frames(count: int, seed: int) -> torch.Tensor:
    """``[count, 4, 84, 84]`` uint8: every 10th vector step of 4 Ms. Pac-Man games played with uniform actions."""
    env = make_env("ALE/MsPacman-v5", EnvConfig(num_envs=4), seed=seed)
    env.reset(seed=seed)
    generator = torch.Generator().manual_seed(seed)
    frames = [env.step(torch.randint(env.single_action_space.n, (4,), generator=generator)).obs.clone() for _ in range(10 * count // 4)]
    env.close()
    return torch.cat(frames[::10])[:count]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weights", default=WEIGHTS)
    parser.add_argument("--frames", type=int, default=120)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)
    frames = random_frames(args.frames, args.seed)
    print(f"{len(frames)} frames of random play; per-unit std over the frames, averaged over units")
    print("| torso | conv outputs' std | fc features' std | fc units always 0 | initial Q's std over frames |")
    print("|---|---:|---:|---:|---:|")
    for parts in (None, ("policy_convs",), ("policy_body",)):
        torch.manual_seed(args.seed)
        learner = R2D2(R2D2Config(network="dqn2013", memory="none", lstm_size=256, head_size=256), (4, 84, 84), gym.spaces.Discrete(9))  # Ms. Pac-Man: 9 actions
        if parts is not None:
            load_parts(learner.policy, args.weights, parts)
        torso, batch = learner.policy.torso, len(frames)
        seen = []
        hook = torso.convs.register_forward_hook(lambda module, inputs, output: seen.append(output.flatten(1)))
        with torch.no_grad():
            features = torso(frames)
            q, _ = learner.policy.unroll(frames.unsqueeze(0), torch.zeros(1, batch, dtype=torch.long), torch.zeros(1, batch),
                                         (torch.zeros(batch, 256), torch.zeros(batch, 256)))
        hook.remove()
        convs = seen[0]
        name = "fresh" if parts is None else f"--init-parts {parts[0]}"
        print(f"| {name} | {convs.std(0).mean():.3f} | {features.std(0).mean():.3f} | {(features.amax(0) == 0).float().mean():.2f} | "
              f"{q[0].std(0).mean():.3f} |")


if __name__ == "__main__":
    main()
