"""Does an R2D2 run's ``--prior`` still steer its greedy play? For a run with a prior, on frames of a uniform-random
policy's play (one every 10 steps of 400 vector steps, environment seed 0), the share of frames whose greedy action
in Q = Q_theta + w log pi_prior is the prior's own, and the mean gap between the best and the median action of the
prior's part (w log pi_prior) and of the learned part (Q_theta): with a fresh Q-network drawn here (not the run's own
first one, whose draw and ``--from`` parts it does not repeat) and with the run's checkpoint.

    python benchmarks/prior_agreement.py RUN_DIR [RUN_DIR ...]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch

from voidrl.algos.r2d2 import R2D2
from voidrl.config import TrainConfig
from voidrl.envs.factory import make_env
from voidrl.io.checkpoint import load_checkpoint
from voidrl.nets.recurrent import RecurrentQNetwork


def random_play_frames(config: TrainConfig, vector_steps: int = 400, every: int = 10) -> torch.Tensor:
    """``[K, ...]`` observations of the run's environments under uniform-random actions, one vector step in ``every``."""
    env = make_env(config.run.env, config.env, seed=0)
    env.reset(seed=0)
    generator = torch.Generator().manual_seed(0)
    frames = []
    for step in range(vector_steps):
        actions = torch.randint(env.single_action_space.n, (env.num_envs,), generator=generator)
        observations = env.step(actions).obs
        if step % every == 0:
            frames.append(observations.clone())
    env.close()
    return torch.cat(frames)


def agreement(q_network: RecurrentQNetwork, frames: torch.Tensor) -> tuple[float, float, float]:
    """(share of ``frames [K, ...]`` whose greedy action is the prior's, prior's part's gap, learned part's gap)."""
    with torch.no_grad():
        state = q_network.initial_state(len(frames))
        q, _ = q_network.unroll(frames.unsqueeze(0), state.previous_action.unsqueeze(0), torch.zeros(1, len(frames)),
                                (state.hidden, state.cell))
        prior_part = q_network.prior_coef * q_network.prior_log_probs(frames.unsqueeze(0))
    q, prior_part = q[0], prior_part[0]
    learned = q - prior_part

    def gap(values: torch.Tensor) -> float:
        return (values.max(-1).values - values.median(-1).values).mean().item()

    return (q.argmax(-1) == prior_part.argmax(-1)).float().mean().item(), gap(prior_part), gap(learned)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", type=Path, nargs="+", help="run directories of R2D2 with --prior (config.json, checkpoint.pt)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    print("| run | networks | step | greedy action the prior's | prior's gap (best - median) | learned part's gap |")
    print("|---|---|---:|---:|---:|---:|")
    for run in args.runs:
        config = TrainConfig.from_dict(json.loads((run / "config.json").read_text()))
        if config.algo != "r2d2" or config.algo_config.prior is None:
            parser.error(f"{run} is not an R2D2 run with a prior")
        frames = random_play_frames(config)
        torch.manual_seed(config.run.seed)
        learner = R2D2(config.algo_config, tuple(frames.shape[1:]), make_env(config.run.env, config.env).single_action_space)
        rows = [("a fresh Q-network", 0, agreement(learner.policy, frames))]
        checkpoint = load_checkpoint(run / "checkpoint.pt")
        learner.policy.load_state_dict(checkpoint["algorithm"]["policy"])
        rows.append(("the checkpoint's", checkpoint["step"], agreement(learner.policy, frames)))
        for name, step, (share, prior_gap, learned_gap) in rows:
            print(f"| {run} | {name} | {step:,} | {share:.2f} | {prior_gap:.2f} | {learned_gap:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
