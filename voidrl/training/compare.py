"""Fine-tuning from a pre-trained checkpoint against training from scratch, over seeds."""

from __future__ import annotations

import copy
import multiprocessing
import os
import signal
import sys
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Any

from voidrl.config import TrainConfig
from voidrl.extras import require
from voidrl.io.report import compare_runs
from voidrl.training.allocator import pin_allocator_thresholds
from voidrl.training.loop import CHECKPOINT_NAME, has_run_files
from voidrl.training.runs import make_trainer
from voidrl.training.signals import GracefulStop, RunStopped, stop_with_parent
from voidrl.training.threads import available_cpus

GROUPS = {"pre-trained": "pretrained", "scratch": "scratch"}


def run_to_completion(config: TrainConfig) -> None:
    """Train, resume an interrupted run, or skip one already finished (so a compare can be re-run)."""
    run_dir = Path(config.run_dir)
    trainer = make_trainer(config, resume=(run_dir / CHECKPOINT_NAME).exists() or has_run_files(run_dir))
    if trainer.step < config.run.steps:
        trainer.train()
    else:
        trainer.close()


def start_fresh(config: TrainConfig) -> TrainConfig:
    """``config`` (changed in place and returned) without the options that start its networks from a checkpoint."""
    config.run.init_from = config.run.init_parts = None
    config.run.init_temperature = 1.0
    return config


def comparison_runs(base: TrainConfig, seeds: int) -> list[TrainConfig]:
    """``seeds`` runs each of ``base`` started from ``base.run.init_from`` and from scratch, same budget.

    Runs go to ``<run_dir>/<pretrained|scratch>/seed<k>``, seeds ``base.run.seed + k`` (the same for both
    groups), in the order pre-trained seed 0, scratch seed 0, pre-trained seed 1, ...
    """
    if seeds < 1:
        raise ValueError(f"seeds must be a positive integer, got {seeds}")
    runs = []
    for k in range(seeds):
        for name, folder in GROUPS.items():
            config = copy.deepcopy(base)
            config.run.seed = base.run.seed + k
            if name == "scratch":
                start_fresh(config)
            config.run.run_dir = str(Path(base.run_dir) / folder / f"seed{k}")
            runs.append(config)
    return runs


ANALYSIS_MODULES = ("matplotlib", "scipy", "rliable")
"""What the table and the plot of a comparison import (the ``analysis`` extra)."""


def preflight(configs: list[TrainConfig], init_checkpoint: dict[str, Any] | None = None) -> None:
    """Check that the analysis packages are installed, then build each run once on trial (nothing is written), so a
    missing package, a bad option or a network that does not fit fails before the first run starts. A checkpoint to
    start from that the pre-training is still to write is left out of the trial; ``init_checkpoint`` is the loaded one
    they start from, if any."""
    for module in ANALYSIS_MODULES:
        require(module, "analysis", "voidrl compare")
    for config in configs:
        if config.run.init_from is not None and not Path(config.run.init_from).exists():
            config = start_fresh(copy.deepcopy(config))
        make_trainer(config, resume=True, init_checkpoint=init_checkpoint).close()


def compare(base: TrainConfig, runs: list[TrainConfig], parallel: int = 1) -> str:
    """Run (or resume, or reuse) every run of ``comparison_runs``, ``parallel`` at a time; write and return the table."""
    if parallel == 1:
        for config in runs:
            run_to_completion(config)
    else:
        run_side_by_side(runs, parallel)
    groups = {name: [Path(c.run_dir) for c in runs if (c.run.init_from is None) == (name == "scratch")] for name in GROUPS}
    return compare_runs(groups, base.run.steps, Path(base.run_dir) / "comparison")


def run_side_by_side(runs: list[TrainConfig], parallel: int) -> None:
    """``parallel`` runs at a time in worker processes, each with its share of the CPUs and no progress bar.

    A SIGINT or SIGTERM to this process reaches every worker once (they run in process groups of
    their own, so a terminal's Ctrl-C is not delivered twice): each running run writes its checkpoint
    and stops, runs not started are dropped, and ``RunStopped`` is raised here; a second signal is
    passed on too and stops the workers at once.
    """
    threads = max(1, available_cpus() // parallel)
    runs = copy.deepcopy(runs)
    for config in runs:
        config.run.progress = False
        config.run.torch_threads = config.run.torch_threads or threads
    context = multiprocessing.get_context("spawn")
    with GracefulStop() as stop, ProcessPoolExecutor(parallel, mp_context=context, initializer=_detach_worker) as pool:
        futures = {pool.submit(run_to_completion, config): config.run_dir for config in runs}
        pending = set(futures)
        try:
            while pending:
                done, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
                for future in done:
                    future.result()  # a failed run stops the comparison with its error
                    print(f"voidrl compare: {futures[future]} done ({len(futures) - len(pending)}/{len(futures)})",
                          file=sys.stderr)
                stop.check()
        except BaseException as error:  # a signal, or a failed run: the others checkpoint and stop
            _forward(error.signum if isinstance(error, RunStopped) else signal.SIGTERM)
            try:
                pool.shutdown(wait=True, cancel_futures=True)
            except RunStopped as again:  # another signal while they checkpoint: they stop at once
                _forward(again.signum)
            raise


def _forward(signum: int) -> None:
    for child in multiprocessing.active_children():
        os.kill(child.pid, signum)


def _detach_worker() -> None:
    """In each worker: a process group of its own (signals come only through the parent, once), on
    Linux a SIGTERM when the parent dies, so an orphaned run checkpoints and stops, and the CLI's
    allocator thresholds."""
    os.setpgrp()
    pin_allocator_thresholds()
    stop = stop_with_parent()
    if stop is not None:
        stop()
