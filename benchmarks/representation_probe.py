#!/usr/bin/env python
"""Does APT's contrastive encoder learn on real frames, or collapse? Train it offline and watch.

Collects ``--states`` real observations of a pixel env (16 envs, a random policy or a saved
agent's sampled actions; one vector step in ``--stride`` kept, which decorrelates the batch),
then, for every ``--setting`` and seed, fills an APT plug-in's representation buffer with them
and takes ``--updates`` contrastive updates, printing every ``--report-every`` updates:

- the contrastive loss and its chance level (log(2N - 1) for nt-xent, log N for curl: every
  logit equal, i.e. a collapsed representation) and top-1 contrastive accuracy;
- the mean norm of the projections before normalisation, the mean per-dimension std of the
  15-d latents, their effective rank (exp of the entropy of the normalised singular values)
  and the share of dead latent units (std < 0.01 over the batch).

A setting is a name from SETTINGS, optionally followed by ``:option=value,...`` overrides of
APTConfig fields. ``re3`` is the frozen random encoder: measured, never updated. At the end it
prints one table (mean over the last 50 updates of each seed, then over seeds), the share of
near-duplicate frames in a batch, and the particle-reward check: on the last 4,096 states
(as one rollout) the Spearman correlation between a state's particle reward and how often it
was visited (how many of those states lie within a root-mean-square pixel difference of
``--visit-radius`` of it). ``--figure`` plots reward against visits for the first seed.

    python benchmarks/representation_probe.py --settings thesis default re3 --seeds 0 1 2
    python benchmarks/representation_probe.py --env MinAtar/Breakout-v1 --settings default --updates 300
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import time
from pathlib import Path

import numpy as np
import torch
from scipy.stats import spearmanr

from voidrl.configs.ppg import PRESETS
from voidrl.envs.factory import EnvConfig, make_env
from voidrl.intrinsic.apt import APTConfig, APTReward
from voidrl.math.contrastive import representation_metrics
from voidrl.math.knn import knn_distances, particle_reward

THESIS = {name: value for name, value in PRESETS["pretrain-nt-xent"]["intrinsic_config"].items()
          if name not in ("extrinsic_coef", "intrinsic_coef")}
SETTINGS: dict[str, dict] = {
    "thesis": THESIS,
    "default": {},
    "re3": {"contrastive_updates_per_step": 0.0},
}
"""Named settings: APTConfig overrides. ``default`` is APTConfig's defaults (pre-training's on every env)."""
LAST = 50
REWARD_STATES = 4096


def parse_setting(text: str) -> tuple[str, dict]:
    """``name[:field=value,...]`` -> (label, APTConfig overrides)."""
    name, _, rest = text.partition(":")
    if name not in SETTINGS:
        raise SystemExit(f"--settings: unknown setting {name!r}; known: {', '.join(SETTINGS)} (add :field=value,...)")
    overrides = dict(SETTINGS[name])
    fields = {f.name: f for f in dataclasses.fields(APTConfig)}
    for item in filter(None, rest.split(",")):
        key, _, value = item.partition("=")
        if key not in fields:
            raise SystemExit(f"--settings: {key!r} is not an APT option; options: {', '.join(fields)}")
        default = fields[key].default
        if isinstance(default, bool):
            overrides[key] = value.lower() in ("1", "true", "yes")
        elif isinstance(default, (int, float)) and not isinstance(default, bool):
            overrides[key] = type(default)(float(value)) if isinstance(default, int) else float(value)
        else:
            overrides[key] = value
    return text, overrides


def collect_frames(env_id: str, states: int, num_envs: int, stride: int, policy: str | None, seed: int) -> torch.Tensor:
    """``[T, num_envs, C, H, W]`` uint8 observations, one vector step in ``stride`` kept, T * num_envs >= states."""
    env = make_env(env_id, EnvConfig(num_envs=num_envs))
    agent = None
    if policy is not None:
        from voidrl.training.agent import Agent

        agent = Agent.load(policy)
    generator = torch.Generator().manual_seed(seed)
    obs = env.reset(seed)
    kept = []
    steps = math.ceil(states / num_envs) * stride
    for step in range(steps):
        if step % stride == 0:
            kept.append(obs.clone())
        if agent is None:
            actions = torch.randint(env.single_action_space.n, (num_envs,), generator=generator)
        else:
            actions = agent.act(obs, deterministic=False)
        obs = env.step(actions).obs
    env.close()
    return torch.stack(kept)


def near_duplicate_share(frames: torch.Tensor, radius: float) -> float:
    """Share of ``frames [B, ...]`` that have another frame within root-mean-square pixel difference ``radius``."""
    return float((pixel_neighbours(frames, radius) > 0).float().mean())


def pixel_neighbours(frames: torch.Tensor, radius: float, chunk: int = 512) -> torch.Tensor:
    """``[B]``: how many *other* frames lie within root-mean-square pixel difference ``radius`` (of 255) of each."""
    flat = frames.flatten(1).float()
    counts = []
    for start in range(0, len(flat), chunk):
        distance = torch.cdist(flat[start:start + chunk], flat) / math.sqrt(flat.shape[1])
        counts.append((distance <= radius).sum(1) - 1)
    return torch.cat(counts)


@torch.no_grad()
def measure_only(plugin: APTReward) -> dict[str, torch.Tensor]:
    """The metrics of a contrastive update without the update (the frozen random encoder)."""
    plugin.encoder.eval(), plugin.head.eval()  # also freezes spectral norm's power iteration
    frames = plugin.buffer.sample(plugin.config.contrastive_batch_size)
    views = plugin.draw_views(frames.shape[0])
    latents, projections = plugin.embed(frames, views[0])
    other = plugin.embed(frames, views[1], target=plugin.bilinear is not None)[1]
    loss, metrics = plugin.contrastive_loss([projections, other], other)
    return {**metrics, **representation_metrics(latents, projections)}


def chance_loss(config: APTConfig) -> float:
    batch = config.contrastive_batch_size
    return math.log(2 * batch - 1) if config.contrastive_loss == "nt-xent" else math.log(batch)


@torch.no_grad()
def reward_against_visits(plugin: APTReward, frames: torch.Tensor, radius: float) -> tuple[np.ndarray, np.ndarray]:
    """Particle rewards (one rollout of ``frames [B, ...]``, normalised by its own mean k-NN distance) and visit counts."""
    plugin.encoder.eval()
    latents = torch.cat([plugin.encoder(chunk.float() / 255.0) for chunk in frames.split(512)])
    distances = knn_distances(latents, plugin.config.knn_k)
    rewards = particle_reward(distances, distances.mean(1).mean(), plugin.config.reward_offset, plugin.config.knn_clip)
    return rewards.numpy(), pixel_neighbours(frames, radius).numpy()


def probe(label: str, overrides: dict, frames: torch.Tensor, args: argparse.Namespace, seed: int) -> dict:
    torch.manual_seed(seed)
    config = APTConfig(**{**overrides, "contrastive_batch_size": args.batch, "contrastive_start": 0,
                          "representation_buffer": frames.shape[0] * frames.shape[1]})
    plugin = APTReward(config, tuple(frames.shape[2:]))
    for step in frames:
        plugin.buffer.add(step)
    frozen = config.contrastive_updates_per_step == 0
    history: list[dict[str, float]] = []
    started = time.perf_counter()
    for update in range(1, args.updates + 1):
        metrics = measure_only(plugin) if frozen else plugin.contrastive_update()
        history.append({name.removeprefix("apt/"): float(value) for name, value in metrics.items()})
        if update % args.report_every == 0 or update == 1:
            recent = {name: np.mean([h[name] for h in history[-args.report_every:]]) for name in history[-1]}
            print(f"  [{label} seed {seed}] update {update:5d}: loss {recent['contrastive_loss']:.3f} "
                  f"(chance {chance_loss(config):.3f}) acc {recent['contrastive_accuracy']:.3f} "
                  f"rank {recent['latent_effective_rank']:.2f} dead {recent['dead_units']:.2f} "
                  f"std {recent['latent_std']:.3f} |g(f)| {recent['projection_norm']:.2f}", flush=True)
    seconds = time.perf_counter() - started
    final = {name: float(np.mean([h[name] for h in history[-LAST:]])) for name in history[-1]}
    final["updates_per_second"] = args.updates / seconds
    final["chance_loss"] = chance_loss(config)
    rewards, visits = reward_against_visits(plugin, frames.flatten(0, 1)[-REWARD_STATES:], args.visit_radius)

    final["reward_visit_spearman"] = float(spearmanr(rewards, visits).statistic)
    final["curve"] = history
    final["rewards"], final["visits"] = rewards, visits
    return final


COLUMNS = [("contrastive_loss", "loss", ".3f"), ("chance_loss", "chance", ".3f"), ("contrastive_accuracy", "top-1", ".3f"),
           ("latent_effective_rank", "eff. rank", ".2f"), ("dead_units", "dead", ".2f"), ("latent_std", "latent std", ".3f"),
           ("projection_norm", "norm g(f)", ".2f"), ("reward_visit_spearman", "rho(reward, visits)", ".2f"),
           ("updates_per_second", "updates/s", ".2f")]


def table(results: dict[str, list[dict]]) -> str:
    lines = ["| setting | seed | " + " | ".join(title for _, title, _ in COLUMNS) + " |",
             "|---|---|" + "---:|" * len(COLUMNS)]
    for label, runs in results.items():
        for seed, run in runs:
            lines.append(f"| {label} | {seed} | " + " | ".join(format(run[key], fmt) for key, _, fmt in COLUMNS) + " |")
        if len(runs) > 1:
            lines.append(f"| **{label}** | mean | " + " | ".join(
                format(np.mean([run[key] for _, run in runs]), fmt) for key, _, fmt in COLUMNS) + " |")
    return "\n".join(lines)


def plot(results: dict[str, list[dict]], path: Path, updates: int) -> None:
    from voidrl.io.report import pyplot

    plt = pyplot()
    figure, (curves, scatter) = plt.subplots(1, 2, figsize=(12, 4.5))
    for label, runs in results.items():
        seed, run = runs[0]
        loss = np.array([h["contrastive_loss"] for h in run["curve"]]) / run["chance_loss"]
        curves.plot(np.arange(1, len(loss) + 1), loss, label=f"{label} (seed {seed})", lw=1)
        visits, rewards = run["visits"], run["rewards"]
        scatter.scatter(visits + 1, rewards, s=3, alpha=0.3, label=f"{label}: rho {run['reward_visit_spearman']:.2f}")
    curves.set_xlabel("contrastive update")
    curves.set_ylabel("loss / chance loss (1 = collapsed)")
    curves.set_xlim(0, updates)
    curves.legend(fontsize=7)
    scatter.set_xscale("log")
    scatter.set_xlabel("visits: 1 + other states within the pixel radius")
    scatter.set_ylabel("particle reward")
    scatter.legend(fontsize=7, markerscale=4)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="ALE/MsPacman-v5")
    parser.add_argument("--states", type=int, default=10_000)
    parser.add_argument("--num-envs", type=int, default=16)
    parser.add_argument("--stride", type=int, default=1, help="keep one vector step in this many")
    parser.add_argument("--policy", default=None, help="a checkpoint whose sampled actions collect the frames (default: random)")
    parser.add_argument("--settings", nargs="+", default=["thesis", "default", "re3"])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--updates", type=int, default=1_000)
    parser.add_argument("--batch", type=int, default=512)
    parser.add_argument("--report-every", type=int, default=100)
    parser.add_argument("--visit-radius", type=float, default=5.0, help="pixel radius of a visit: RMS difference, of 0..255")
    parser.add_argument("--torch-threads", type=int, default=None)
    parser.add_argument("--figure", type=Path, default=None)
    args = parser.parse_args(argv)
    settings = [parse_setting(text) for text in args.settings]
    for label, overrides in settings:
        try:
            APTConfig(**overrides).validate()
        except (TypeError, ValueError) as error:
            raise SystemExit(f"--settings {label}: {error}")
    if args.torch_threads:
        torch.set_num_threads(args.torch_threads)
    started = time.perf_counter()
    frames = collect_frames(args.env, args.states, args.num_envs, args.stride, args.policy, seed=0)
    batch = frames.flatten(0, 1)[torch.randint(frames.shape[0] * frames.shape[1], (args.batch,), generator=torch.Generator().manual_seed(0))]
    duplicates = near_duplicate_share(batch, args.visit_radius)
    print(f"{args.env}: {frames.shape[0] * frames.shape[1]} states ({frames.shape[0]} vector steps x {frames.shape[1]} envs, "
          f"stride {args.stride}) in {time.perf_counter() - started:.0f} s; near-duplicate share of a {args.batch}-batch "
          f"(another frame within {args.visit_radius}/255): {duplicates:.2f}", flush=True)
    results: dict[str, list] = {}
    for label, overrides in settings:
        for seed in args.seeds:
            results.setdefault(label, []).append((seed, probe(label, overrides, frames, args, seed)))
    print(f"\n{args.env}, {frames.shape[0] * frames.shape[1]} states, stride {args.stride}, batch {args.batch}, "
          f"{args.updates} updates (last {LAST} averaged); near-duplicate share {duplicates:.2f}; "
          f"{torch.get_num_threads()} torch threads\n")
    print(table(results))
    if args.figure:
        plot(results, args.figure, args.updates)
        print(f"\nfigure: {args.figure}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
