#!/usr/bin/env python
"""Issue 86, part 2, a cheap pre-selection: which representation objective makes APT's latent read where Ms. Pac-Man
goes, before any 1M-step pre-training is spent on it?

It plays ``--train-games`` sampled games of a weights file's policy (seeded ``--train-seed``, games apart from the
probes'), passing every transition to a fresh APT plug-in with the ``pretrain`` preset's settings and an ``--arm``'s
changes to them (the real buffer, its arrivals and its updates), once per arm. Each plug-in then takes ``--updates``
representation updates on what its buffer holds (500: about what a 1M-step pre-training of the preset takes, 2 a
rollout), and its encoder is measured as ``latent_probe.py`` measures one, on the probe games of the same policy:
held-out R^2 of her position, the ghosts' and the score, and how its particle novelty follows theirs. The untrained
encoder is the first row.

    python benchmarks/latent_objectives.py --weights benchmarks/results/mspacman-2026-11-28-knn-scope/pretrain/pretrained-weights.pt \
        --arm inverse_dynamics_coef=0 --arm inverse_dynamics_coef=1 --arm inverse_dynamics_coef=1,encoder_learning_rate=1e-3
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

import voidrl
from voidrl.config import algorithm_presets
from voidrl.configs.apt import APTConfig
from voidrl.intrinsic.apt import APTReward
from voidrl.rollout.collector import Transition
from voidrl.training.exploration import measure_exploration

sys.path.insert(0, str(Path(__file__).resolve().parent))
from latent_probe import latents_of, measure, play, quantities, table, write_table  # noqa: E402


def recorded_transitions(weights: Path, games: int, seed: int) -> list[Transition]:
    """Every vector step of ``games`` sampled games of the file's policy, one sub-environment per game."""
    agent = voidrl.load(str(weights))
    env = agent.make_env(games, ram=True)
    memory = agent.memory(games, False, agent.evaluation_member(None), torch.Generator().manual_seed(seed))
    acted: list[tuple[torch.Tensor, torch.Tensor]] = []
    steps: list[Transition] = []

    def act(obs: torch.Tensor) -> torch.Tensor:
        actions = agent.act_with(memory, obs)
        acted.append((obs.clone(), actions.clone()))
        return actions

    def after_step(step) -> None:
        memory.after_step(step)
        obs, actions = acted[-1]
        steps.append(Transition(obs, actions, step.final_obs.clone(), step.terminated.clone(), step.truncated.clone()))

    try:
        measure_exploration(env, act, games, seed, None, after_step)
    finally:
        env.close()
    return steps


def arm_changes(text: str) -> dict[str, float]:
    """``name=value,name=value`` (APT options, numbers) as a dict."""
    changes = {}
    for item in filter(None, text.split(",")):
        name, _, value = item.partition("=")
        if name not in APTConfig.__dataclass_fields__ or not value:
            raise argparse.ArgumentTypeError(f"--arm takes NAME=VALUE,... of APT options; got {item!r}")
        changes[name] = float(value)
    return changes


def preset_config(changes: dict[str, float]) -> APTConfig:
    """The pretrain preset's APT settings with ``changes``, never updating on its own."""
    settings = algorithm_presets("ppg")["pretrain"]["intrinsic_config"]
    config = APTConfig(**{**settings, **changes, "contrastive_start": 10 ** 12})
    config.validate()
    return config


def trained_plugin(transitions: list[Transition], obs_shape: tuple[int, ...], action_space, changes: dict[str, float],
                   updates: int, seed: int) -> tuple[APTReward, dict[str, float]]:
    """A fresh plug-in with the pretrain preset's settings and ``changes``, fed the transitions, then ``updates``
    representation updates; the mean of its last 50 updates' metrics."""
    torch.manual_seed(seed)
    plugin = APTReward(preset_config(changes), obs_shape, "cpu", action_space)
    with torch.no_grad():
        for transition in transitions:
            plugin.on_step(transition)
    history = [plugin.contrastive_update() for _ in range(updates)]
    last = history[-50:]
    return plugin, {name: torch.stack([m[name] for m in last]).mean().item() for name in last[0]} if last else {}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weights", type=Path, required=True, help="the policy that plays the training and probe games")
    parser.add_argument("--arm", type=arm_changes, action="append", required=True,
                        help="changes to the preset's APT options, NAME=VALUE,...; repeat for each arm")
    parser.add_argument("--updates", type=int, default=500)
    parser.add_argument("--train-games", type=int, default=16)
    parser.add_argument("--train-seed", type=int, default=1000)
    parser.add_argument("--probe-games", type=int, default=16)
    parser.add_argument("--seed", type=int, default=0, help="the probe games' (explore --seed) and the plug-ins' torch seed")
    parser.add_argument("--window", type=int, default=256)
    parser.add_argument("--torch-threads", type=int, default=1)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    torch.set_num_threads(args.torch_threads)
    started = time.perf_counter()
    transitions = recorded_transitions(args.weights, args.train_games, args.train_seed)
    frames, ram = play(args.weights, args.probe_games, args.seed)
    targets, obs_shape = quantities(ram), tuple(frames.shape[2:])
    action_space = voidrl.load(str(args.weights)).interface.action_space
    print(f"{len(transitions)} vector steps of {args.train_games} training games, {frames.shape[0] * frames.shape[1]} probe "
          f"states ({time.perf_counter() - started:.0f} s)", file=sys.stderr, flush=True)
    knn_k = preset_config({}).knn_k
    rows = []
    for index, changes in enumerate(args.arm):
        for updates in ([0] if index == 0 else []) + [args.updates]:
            plugin, metrics = trained_plugin(transitions, obs_shape, action_space, changes, updates, args.seed)
            label = ", ".join(f"{name} {value:g}" for name, value in changes.items()) or "the preset"
            row = measure(f"{label}, {updates} updates", latents_of(plugin.encoder.eval(), frames), targets, args.window, knn_k)
            row |= {name.removeprefix("apt/"): value for name, value in metrics.items() if "accuracy" in name}
            rows.append(row)
            print(table([row]), f"({time.perf_counter() - started:.0f} s)", file=sys.stderr, flush=True)
    write_table(rows, args.out)


if __name__ == "__main__":
    main()
