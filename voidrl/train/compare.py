"""Fine-tuning from a pre-trained checkpoint against training from scratch, over seeds."""

from __future__ import annotations

import copy
from pathlib import Path

from voidrl.config import TrainConfig
from voidrl.io.checkpoint import load_checkpoint
from voidrl.io.report import compare_runs
from voidrl.train.loop import CHECKPOINT_NAME, train_from_config

GROUPS = {"pre-trained": "pretrained", "scratch": "scratch"}


def run_to_completion(config: TrainConfig) -> None:
    """Train, resume an interrupted run, or skip one already finished (so a compare can be re-run)."""
    checkpoint = Path(config.run_dir) / CHECKPOINT_NAME
    if not checkpoint.exists():
        train_from_config(config)
    elif load_checkpoint(checkpoint)["step"] < config.run.steps:
        train_from_config(config, resume=True)


def compare(base: TrainConfig, pretrained: str, seeds: int) -> str:
    """``seeds`` runs each of ``base`` started from ``pretrained`` and from scratch, same budget.

    Runs go to ``<run_dir>/<pretrained|scratch>/seed<k>``; the table and plot to ``<run_dir>``.
    Seeds are ``base.run.seed + k``, the same for both groups.
    """
    if seeds < 1:
        raise ValueError(f"seeds must be a positive integer, got {seeds}")
    out_dir = Path(base.run_dir)
    groups: dict[str, list[Path]] = {name: [] for name in GROUPS}
    for k in range(seeds):
        for name, folder in GROUPS.items():
            config = copy.deepcopy(base)
            config.run.seed = base.run.seed + k
            config.run.init_from = pretrained if name == "pre-trained" else None
            config.run.run_dir = str(out_dir / folder / f"seed{k}")
            run_to_completion(config)
            groups[name].append(Path(config.run.run_dir))
    return compare_runs(groups, base.run.steps, out_dir)
