"""The table of ``voidrl vae probe`` figures kept under a results folder, one row per probe of a VAE (its folder's
probe*.json files and config.json): the frames it trained on and the frames it was probed on, random actions or a
share of them from a trained agent's episodes (``--policy``).

    python benchmarks/vae_probe_table.py benchmarks/results/vae-probe-2026-11-26
    python benchmarks/vae_probe_table.py benchmarks/results/vae-probe-pendulum-2026-11-26
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def frame_source(settings: dict) -> str:
    """Where a VAE's or a probe's frames came from: random actions, or a share of them from an agent's episodes."""
    share = settings.get("policy_share", 0.0) if settings.get("policy") else 0.0
    return "random" if share == 0 else f"{100 * share:.0f}% agent"


def likelihood(config: dict) -> str:
    """The VAE's pixel model where it is not the default Bernoulli one."""
    name = config.get("likelihood", "bernoulli")
    return "" if name == "bernoulli" else f", {name} (std {config['gaussian_std']:g})"


def table(folder: Path) -> str:
    lines = ["| VAE | trained on (frames x epochs, batch, frame source, frame size, likelihood if not Bernoulli) | encoder kernel | latent | body weight | probed on | "
             "probe R^2, mean (per joint) | untrained VAE's R^2 | limbs' joint angles: probe R^2 (untrained) | "
             "the same, k-nearest-neighbour probe | body MSE | background drawn on the body | MSE elsewhere |",
             "|---|---|---:|---:|---:|---|---|---:|---:|---:|---:|---:|---:|"]
    for probe_file in sorted(folder.glob("*/probe*.json")):
        probe, config = json.loads(probe_file.read_text()), json.loads((probe_file.parent / "config.json").read_text())
        lines.append(f"| {probe_file.parent.name} | {config['frames']:,} x {config['epochs']}, {config['batch_size']}, "
                     f"{frame_source(config)}, {config['pixels']} px{likelihood(config)} | {config.get('encoder_kernel', 2)} | {config['latent_size']} | "
                     f"{config.get('body_weight', 1.0):g} | {frame_source(probe)} | "
                     f"{probe['probe_r2_mean']:.3f} ({', '.join(f'{value:.2f}' for value in probe['probe_r2'])}) | "
                     f"{probe['untrained_probe_r2_mean']:.3f} | {probe['probe_r2_limb_angles_mean']:.3f} "
                     f"({probe['untrained_probe_r2_limb_angles_mean']:.3f}) | {probe['knn_probe_r2_limb_angles_mean']:.3f} "
                     f"(k {probe['neighbours']}) | {probe['body_mse']:.4f} | {probe['body_mse_of_background']:.4f} | "
                     f"{probe['background_mse']:.4f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    print(table(parser.parse_args().folder))


if __name__ == "__main__":
    main()
