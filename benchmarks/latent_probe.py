#!/usr/bin/env python
"""Issue 86, part 1: what does a pre-training's APT latent measure on Ms. Pac-Man, and does its particle reward follow
where she goes?

For each weights file (``--keep-weights`` checkpoints, or ``pretrained-weights.pt``) it plays ``--games`` sampled games
of the file's policy (``voidrl explore``'s games: whole games, its seeded actions, on the starts of ``--seed``),
keeping every state's stacked frames and the emulator's RAM, and passes the frames through the file's APT encoder
(the 15-d latent the particle reward is computed in). Then:

probes
    ridge-regression (linear) and 10-nearest-neighbour probes from the latent to what the RAM says (AtariARI's
    annotations, Anand et al. 2019): Ms. Pac-Man's x and y, the four ghosts' x and y, and the score. Fitted on the
    first three quarters of the sub-environments' states, scored on the rest (other games): held-out R^2. The same
    probes from an untrained encoder of the same shape (``random encoder``) say what the architecture alone keeps.
novelty
    the states cut as a rollout cuts them with ``knn_scope environment``: each sub-environment's run of ``--window``
    steps is one particle set. In each, a state's particle novelty (its mean distance to its k nearest other latents, k
    the run's ``knn_k``: the particle reward before its monotone normalisation) against the same novelty measured in
    her (x, y), in the ghosts' eight coordinates and in the score: Spearman's correlation per set, the mean over sets.

    python benchmarks/latent_probe.py --weights benchmarks/results/mspacman-2026-11-28-knn-scope/pretrain/pretrained-weights.pt
    python benchmarks/latent_probe.py --weights RUN/weights/step-*.pt --games 16 --out table.md
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import torch
from scipy.stats import spearmanr

import voidrl
from voidrl.io.checkpoint import load_checkpoint
from voidrl.math.knn import knn_distances
from voidrl.math.probes import knn_probe_r2, linear_probe_r2
from voidrl.nets.encoders import APTEncoder, plain_encoder_state
from voidrl.training.exploration import explore_agent

MSPACMAN_RAM = {"player x": [10], "player y": [16], "ghosts": [6, 7, 8, 9, 12, 13, 14, 15]}
"""AtariARI's Ms. Pac-Man addresses: her x and y, the ghosts' (Sue, Inky, Pinky, Blinky) x then y."""
SCORE_RAM = (120, 121, 122)
"""The score in packed BCD, lowest two digits first (ALE's MsPacman reward reads the same three bytes)."""
TRAIN_SHARE = 0.75


def decimal_score(ram: np.ndarray) -> np.ndarray:
    """The score ``[...]`` from the RAM ``[..., 128]``: three packed-BCD bytes, two digits each."""
    score = np.zeros(ram.shape[:-1])
    for place, address in enumerate(SCORE_RAM):
        byte = ram[..., address].astype(np.int64)
        score += (10 * (byte >> 4) + (byte & 15)) * 100 ** place
    return score


def quantities(ram: np.ndarray) -> dict[str, np.ndarray]:
    """What the probes read out, from the RAM ``[T, N, 128]``: each ``[T, N, K]``."""
    named = {name: ram[..., addresses].astype(np.float64) for name, addresses in MSPACMAN_RAM.items()}
    return named | {"score": decimal_score(ram)[..., None]}


def play(weights: Path, games: int, seed: int) -> tuple[torch.Tensor, np.ndarray]:
    """The states of ``games`` sampled games of the file's policy: frames ``[T, N, C, H, W]`` uint8 (the stacked frames
    each step's RAM belongs to) and RAM ``[T, N, 128]``."""
    frames, rams = [], []

    def observe(step) -> None:
        frames.append(step.final_obs.clone())
        rams.append(step.ram.copy())

    agent = voidrl.load(str(weights))
    explore_agent(agent, games, None, seed, deterministic=False, observe=observe)
    return torch.stack(frames), np.stack(rams)


def encoder_of(saved: dict, obs_shape: tuple[int, ...]) -> APTEncoder:
    """The APT encoder of a loaded weights file, without spectral norm (its weights already divided by it)."""
    encoder = APTEncoder(obs_shape, spectral=False)
    encoder.load_state_dict(plain_encoder_state(saved["intrinsic"]["encoder"], obs_shape))
    return encoder.eval()


@torch.no_grad()
def latents_of(encoder: APTEncoder, frames: torch.Tensor, chunk: int = 256) -> torch.Tensor:
    """``[T, N, D]`` latents of ``frames [T, N, C, H, W]``, scaled as the particle reward scales them."""
    flat = frames.flatten(0, 1)
    out = torch.cat([encoder(part.float() / 255.0) for part in flat.split(chunk)])
    return out.view(*frames.shape[:2], -1)


def probe_scores(latents: torch.Tensor, targets: dict[str, np.ndarray]) -> dict[str, float]:
    """Held-out R^2 of each quantity (a mean over its coordinates), linear then k-NN; the states of the first
    ``TRAIN_SHARE`` of the sub-environments fit, the others score."""
    envs = latents.shape[1]
    split = max(1, int(round(envs * TRAIN_SHARE)))
    train_x, test_x = latents[:, :split].flatten(0, 1), latents[:, split:].flatten(0, 1)
    scores = {}
    for name, values in targets.items():
        y = torch.as_tensor(values)
        train_y, test_y = y[:, :split].flatten(0, 1), y[:, split:].flatten(0, 1)
        scores[f"linear {name}"] = linear_probe_r2(train_x, train_y, test_x, test_y).mean().item()
        scores[f"knn {name}"] = knn_probe_r2(train_x, train_y, test_x, test_y).mean().item()
    return scores


def novelty_correlations(latents: torch.Tensor, targets: dict[str, np.ndarray], window: int, k: int) -> dict[str, float]:
    """Mean over particle sets (each sub-environment's runs of ``window`` steps) of Spearman's correlation between
    each state's latent novelty and its novelty in her position, the ghosts' and the score."""
    spaces = {"position": np.concatenate([targets["player x"], targets["player y"]], -1), "ghosts": targets["ghosts"],
              "score": targets["score"]}
    correlations: dict[str, list[float]] = {name: [] for name in spaces}
    steps, envs = latents.shape[:2]
    for env in range(envs):
        for start in range(0, steps - window + 1, window):
            particle = knn_distances(latents[start:start + window, env].double(), k).mean(1).numpy()
            for name, values in spaces.items():
                novelty = knn_distances(torch.as_tensor(values[start:start + window, env]), k).mean(1).numpy()
                if np.ptp(novelty) > 0:
                    correlations[name].append(spearmanr(particle, novelty).statistic)
    return {f"novelty {name}": float(np.mean(values)) if values else float("nan") for name, values in correlations.items()}


def measure(label: str, latents: torch.Tensor, targets: dict[str, np.ndarray], window: int, k: int) -> dict[str, float | str]:
    return {"weights": label, "states": float(latents.shape[0] * latents.shape[1])} | probe_scores(latents, targets) | \
        novelty_correlations(latents, targets, window, k)


def table(rows: list[dict[str, float | str]]) -> str:
    """Markdown of ``rows``, a column for every measure any row has (nan where a row has none), in first-seen order."""
    columns = list(dict.fromkeys(name for row in rows for name in row))
    lines = ["| " + " | ".join(columns) + " |", "|---|" + "---:|" * (len(columns) - 1)]
    for row in rows:
        values = (row.get(name, float("nan")) for name in columns)
        lines.append("| " + " | ".join(value if isinstance(value, str) else f"{value:.0f}" if name == "states" else f"{value:.2f}"
                                       for name, value in zip(columns, values)) + " |")
    return "\n".join(lines)


def write_table(rows: list[dict[str, float | str]], out: Path | None) -> None:
    """The table of ``rows`` on stdout and, where given, in ``out``."""
    text = table(rows)
    print(text)
    if out:
        out.write_text(text + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weights", nargs="+", type=Path, required=True)
    parser.add_argument("--games", type=int, default=16, help="sampled games per weights file (one per sub-environment)")
    parser.add_argument("--seed", type=int, default=0, help="the games' starts and sampled actions (explore --seed)")
    parser.add_argument("--window", type=int, default=256, help="steps of one sub-environment per particle set")
    parser.add_argument("--out", type=Path, help="also write the table here")
    args = parser.parse_args()
    torch.manual_seed(0)
    rows = []
    for weights in args.weights:
        frames, ram = play(weights, args.games, args.seed)
        targets = quantities(ram)
        saved = load_checkpoint(weights)
        knn_k = saved["config"]["intrinsic_config"]["knn_k"]
        obs_shape = tuple(frames.shape[2:])
        rows.append(measure(str(weights), latents_of(encoder_of(saved, obs_shape), frames), targets, args.window, knn_k))
        rows.append(measure(f"random encoder, {weights.name}'s games", latents_of(APTEncoder(obs_shape, spectral=False).eval(), frames),
                            targets, args.window, knn_k))
        print(table(rows[-2:]), flush=True, file=sys.stderr)
    write_table(rows, args.out)


if __name__ == "__main__":
    main()
