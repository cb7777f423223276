"""Issue 63, parts 1 and 2: why fine-tuning Ms. Pac-Man from the committed reward-free weights added nothing at 100k
steps, and what makes it add. Each arm changes one thing, or a few, against ``baseline`` (the committed 100k arm's
command, rerun at this commit) and runs the same seeds; ``scratch`` trains the same agent without the weights:

    python benchmarks/finetune_ablation.py --out RUNS --arms baseline critic-warmup --seeds 0 1 2 --parallel 2
    python benchmarks/finetune_ablation.py --out RUNS --arms epochs-3-sign-clip --explore   # the agents' own games
    python benchmarks/finetune_ablation.py --out RUNS --collect DIR     # config, COMMIT, gz episodes and metrics, evaluations
    python benchmarks/finetune_ablation.py --table DIR                   # every arm against baseline, and the ledger
    python benchmarks/finetune_ablation.py --table DIR --arms q-convs q-body   # those arms alone: rows, comparisons, ledger rows

A run is ``voidrl finetune ppg --from WEIGHTS --env ALE/MsPacman-v5 --preset atari --steps 100000 --seed K
--eval-every 100000 --eval-episodes 30 --torch-threads 1`` plus its arm's options, in ``OUT/ARM/seedK`` (resumed
where stopped; a finished run, one with ``evaluations.csv``, is skipped). ``seedK.COMMIT`` beside a run names the commit
that last started it. The arms of ``ARM_WEIGHTS`` start from another pre-training's weights (another seed of the same
preset): ``table`` sets each against the arm with its settings from ``WEIGHTS`` and against scratch.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mspacman_tables import mean_sem, read_exploration  # noqa: E402
from pool import gzip_copy, run_commands  # noqa: E402
from voidrl.io.report import compare_runs, run_csv_rows, run_measures  # noqa: E402
from voidrl.math.intervals import iqm_interval  # noqa: E402

WEIGHTS = "benchmarks/results/mspacman-2026-11-28-knn-scope/pretrain/pretrained-weights.pt"
BUDGET = 100_000
SCRATCH = "scratch"
ARMS = {
    "baseline": [],
    # the fresh task critic's first advantages move the loaded policy: train the critic alone for 4 rollouts (16k steps)
    "critic-warmup": ["--critic-warmup-rollouts", "4"],
    # the atari preset's auxiliary phase comes every 32 rollouts of 4,096 steps (131k): never within 100k
    "aux-every-8": ["--policy-iterations", "8"],
    # the entropy bonus tuned for scratch keeps the sampled play broad; the weights' greedy play scores 820 to its 608
    "entropy-0": ["--entropy-coef", "0"],
    "lr-1e-4": ["--learning-rate", "1e-4"],
    "lr-1e-3": ["--learning-rate", "1e-3"],
    # 3 passes over each rollout instead of 1: three times the gradient steps from the same games
    "epochs-3": ["--epochs", "3"],
    # 8 x 128 steps per rollout instead of 16 x 256: 98 policy updates within 100k instead of 24, as many gradient steps
    "rollout-8x128": ["--num-envs", "8", "--num-steps", "128"],
    # Atari's usual sign clipping instead of the published attempt's scale of 0.1: a ghost (200-1,600) counts as a pellet
    "sign-clip": ["--reward-clip", "1", "--reward-scale", "1"],
    # pre-training and the baseline end a training episode at each lost life; here only at the game's end
    "no-episodic-life": ["--no-episodic-life"],
    # how much of the pre-trained network to keep: the body alone (fresh policy head), or everything with the critic
    # that learned intrinsic returns
    "init-body": ["--init-parts", "policy_body"],
    "init-all": ["--init-parts", "policy_body", "policy_head", "aux_head", "critic"],
    # the two changes that each led the baseline, together, and with twice the passes
    "epochs-3-sign-clip": ["--epochs", "3", "--reward-clip", "1", "--reward-scale", "1"],
    "epochs-6-sign-clip": ["--epochs", "6", "--reward-clip", "1", "--reward-scale", "1"],
    "epochs-3-sign-clip-entropy-0.001": ["--epochs", "3", "--reward-clip", "1", "--reward-scale", "1", "--entropy-coef", "0.001"],
    # the pre-trained policy samples broadly (entropy about 1.7 nats of ln 9 = 2.2) and its greedy play scores more than
    # its sampled play: a smaller entropy bonus, or none, lets the training games sharpen toward the greedy play
    "epochs-3-sign-clip-entropy-0": ["--epochs", "3", "--reward-clip", "1", "--reward-scale", "1", "--entropy-coef", "0"],
    "epochs-6-sign-clip-entropy-0.001": ["--epochs", "6", "--reward-clip", "1", "--reward-scale", "1", "--entropy-coef", "0.001"],
    # rollouts of 16 x 64 instead of 16 x 256: the same gradient steps, the policy refreshed every 1,024 steps (98 times
    # within 100k instead of 24)
    "epochs-3-sign-clip-entropy-0.001-16x64": ["--epochs", "3", "--reward-clip", "1", "--reward-scale", "1",
                                               "--entropy-coef", "0.001", "--num-steps", "64"],
    "epochs-3-sign-clip-entropy-0.001-lr-6e-4": ["--epochs", "3", "--reward-clip", "1", "--reward-scale", "1",
                                                 "--entropy-coef", "0.001", "--learning-rate", "6e-4"],
    # the loaded policy's logits divided by a temperature below 1: its sampled play starts nearer its greedy play, which
    # scored 820 zero-shot to the sampled play's 608 (ZERO_SHOT's rows at temperatures 0.5 and 0.25)
    "epochs-3-sign-clip-entropy-0.001-temperature-0.5": ["--epochs", "3", "--reward-clip", "1", "--reward-scale", "1",
                                                         "--entropy-coef", "0.001", "--init-temperature", "0.5"],
    "epochs-3-sign-clip-entropy-0.001-temperature-0.25": ["--epochs", "3", "--reward-clip", "1", "--reward-scale", "1",
                                                          "--entropy-coef", "0.001", "--init-temperature", "0.25"],
    # sharper still: the training games start nearer the greedy play (820 zero-shot), at the cost of less exploration
    "epochs-3-sign-clip-entropy-0.001-temperature-0.1": ["--epochs", "3", "--reward-clip", "1", "--reward-scale", "1",
                                                         "--entropy-coef", "0.001", "--init-temperature", "0.1"],
    # the critic trained alone for 4 rollouts first (the fresh critic's first advantages moved the loaded policy)
    "epochs-3-sign-clip-critic-warmup": ["--epochs", "3", "--reward-clip", "1", "--reward-scale", "1", "--critic-warmup-rollouts", "4"],
    "epochs-3-sign-clip-init-all": ["--epochs", "3", "--reward-clip", "1", "--reward-scale", "1",
                                    "--init-parts", "policy_body", "policy_head", "aux_head", "critic"],
    # not fine-tuning: the same agent trained from scratch (voidrl train ppg), at the same commit as the other arms,
    # with the baseline's settings and with epochs-3-sign-clip's
    SCRATCH: [],
    f"{SCRATCH}-epochs-3-sign-clip": ["--epochs", "3", "--reward-clip", "1", "--reward-scale", "1"],
    # scratch with the atari-finetune preset's settings since 1a41c8b (the temperature acts on loaded weights alone), at
    # 100k and 500k: the ledger's same-settings comparisons for epochs-3-sign-clip-entropy-0.001-temperature-0.25
    f"{SCRATCH}-epochs-3-sign-clip-entropy-0.001": ["--epochs", "3", "--reward-clip", "1", "--reward-scale", "1", "--entropy-coef", "0.001"],
    f"{SCRATCH}-epochs-3-sign-clip-entropy-0.001-500k": ["--epochs", "3", "--reward-clip", "1", "--reward-scale", "1",
                                                         "--entropy-coef", "0.001"],
    # scratch on as many environment steps as pre-training (1M reward-free) and fine-tuning (100k) took together
    f"{SCRATCH}-1.1m": [],
    # the atari-finetune preset's settings on five times the budget, against scratch with the same settings
    "epochs-3-sign-clip-500k": ["--epochs", "3", "--reward-clip", "1", "--reward-scale", "1"],
    f"{SCRATCH}-epochs-3-sign-clip-500k": ["--epochs", "3", "--reward-clip", "1", "--reward-scale", "1"],
    # the sharpened start on five times the budget: does it cost the later learning?
    "epochs-3-sign-clip-entropy-0.001-temperature-0.25-500k": ["--epochs", "3", "--reward-clip", "1", "--reward-scale", "1",
                                                               "--entropy-coef", "0.001", "--init-temperature", "0.25"],
    # is it luck? epochs-3-sign-clip from a second pre-training of the same preset (seed 1), not the committed seed 0
    "second-pretraining-epochs-3-sign-clip": ["--epochs", "3", "--reward-clip", "1", "--reward-scale", "1"],
    # and from the third and fourth (seeds 2 and 3), whose weights are not in git: PRETRAINING_RUNS
    "third-pretraining-epochs-3-sign-clip": ["--epochs", "3", "--reward-clip", "1", "--reward-scale", "1"],
    "fourth-pretraining-epochs-3-sign-clip": ["--epochs", "3", "--reward-clip", "1", "--reward-scale", "1"],
    # epochs-3-sign-clip run again at the second pre-training's arm's commit (81f52d3): since 459f317 networks are built
    # with the run's torch thread count, so the fresh critic starts from other bits than at ad8a0af
    "epochs-3-sign-clip-again": ["--epochs", "3", "--reward-clip", "1", "--reward-scale", "1"],
    # off-policy fine-tuning, as the APT paper's (DrQ): R2D2 without memory as a data-efficient DQN (double Q, duelling,
    # 3-step returns, prioritised replay of all 100k steps, each transition replayed 32 times as DER's one update of 32
    # per step), on the policy body's torso (dqn2013) loaded from the weights under a fresh Q-head, and from scratch
    "q-body": ["--init-parts", "policy_body"],
    f"{SCRATCH}-q-body": [],
    # the torso's convolutions alone, its fc layer fresh: the loaded fc's features vary 18x more across Ms. Pac-Man
    # frames than a fresh torso's (benchmarks/torso_features.py), and q-body learned less than scratch
    "q-convs": ["--init-parts", "policy_convs"],
    # DrQ's augmentation, which the APT paper's fine-tuning used: each replayed sequence shifted by up to 4 pixels
    f"{SCRATCH}-q-shift": ["--shift-pixels", "4"],
    "q-convs-shift": ["--init-parts", "policy_convs", "--shift-pixels", "4"],
    # Jump-Start RL: the pre-trained policy plays each life's first 250 steps greedily (its zero-shot greedy games score
    # 820), a horizon shrinking to 0 by 50k steps, so the replay starts with its play and the last 100 games are the
    # Q-network's own
    "q-convs-shift-guide": ["--init-parts", "policy_convs", "--shift-pixels", "4", "--guide", WEIGHTS, "--guide-steps", "250",
                            "--guide-decay-steps", "50000"],
    # the training games' exploration: R2D2's ladder over 4 environments (0.4, 0.047, 0.0056, 0.0007) has one of them
    # play at 0.4; here 0.1 down to 0.01, the data-efficient DQNs' training level
    "q-convs-shift-guide-epsilon-0.1": ["--init-parts", "policy_convs", "--shift-pixels", "4", "--guide", WEIGHTS,
                                        "--guide-steps", "250", "--guide-decay-steps", "50000", "--epsilon-base", "0.1",
                                        "--epsilon-alpha", "1"],
    # the guided arm imitating the guide where it played (DQfD's large-margin loss, lambda 1 and margin 0.8 as DQfD's),
    # so the Q-network's greedy play keeps the guide's after the hand-over
    "q-convs-shift-guide-margin": ["--init-parts", "policy_convs", "--shift-pixels", "4", "--guide", WEIGHTS, "--guide-steps",
                                   "250", "--guide-decay-steps", "50000", "--guide-margin-coef", "1"],
    # the weights as a prior inside the Q-network: Q = Q_theta + log pi_prior, so the greedy play starts as the
    # weights' own (820 greedy) on every step of the run, and the Q-network learns its correction (no hand-over)
    "q-convs-prior": ["--init-parts", "policy_convs", "--prior", WEIGHTS, "--prior-coef", "1"],
    # the pretrain preset with 2 contrastive updates a rollout instead of 32 (issue 65, part 3), on each of the preset's
    # four seeds, fine-tuned as the preset's four pre-trainings were: FEWER_CONTRASTIVE
    **{f"fewer-contrastive-seed{seed}-epochs-3-sign-clip": ["--epochs", "3", "--reward-clip", "1", "--reward-scale", "1"]
       for seed in range(4)},
}
Q_LEARNING = ["--preset", "atari-100k"]
"""The settings of the off-policy arms (``voidrl train|finetune r2d2``): R2D2's Atari-100k preset, whose values the runs
before it (up to 74b278b) gave one by one."""
Q_ARMS = ("q-body", f"{SCRATCH}-q-body", "q-convs", f"{SCRATCH}-q-shift", "q-convs-shift", "q-convs-shift-guide",
          "q-convs-shift-guide-epsilon-0.1", "q-convs-shift-guide-margin", "q-convs-prior")
ARM_STEPS = {f"{SCRATCH}-1.1m": 1_100_000, "epochs-3-sign-clip-500k": 500_000, f"{SCRATCH}-epochs-3-sign-clip-500k": 500_000,
             "epochs-3-sign-clip-entropy-0.001-temperature-0.25-500k": 500_000, f"{SCRATCH}-epochs-3-sign-clip-entropy-0.001-500k": 500_000}
"""Arms trained for other than ``BUDGET`` steps; each is measured on its own budget and left out of the comparisons at
``BUDGET``."""
KNN_SCOPE = Path("benchmarks/results/mspacman-2026-11-28-knn-scope")
SECOND_PRETRAINING = Path("benchmarks/results/mspacman-2026-11-30-pretrain-seed1")
THIRD_PRETRAINING = Path("benchmarks/results/mspacman-2026-11-30-pretrain-seeds/seed2")
FOURTH_PRETRAINING = Path("benchmarks/results/mspacman-2026-11-30-pretrain-seeds/seed3")
"""The third and fourth pre-trainings (seeds 2 and 3), whose weights are not in git (the issue allows one more set, the
second's): their results folders, with their zero-shot games."""
PRETRAINING_RUNS = Path("runs/pretrain-seeds")
"""Where ``mspacman-2026-11-30-pretrain-seeds/run.sh SEED PRETRAINING_RUNS/seedSEED`` wrote the third and fourth
pre-trainings, whose last networks (``weights/step-1003520.pt``, kept by ``--keep-weights``) their arms start from."""
FEWER_CONTRASTIVE = Path("benchmarks/results/mspacman-2026-12-01-fewer-contrastive-1m")
FEWER_CONTRASTIVE_RUNS = Path("runs/fewer-contrastive-1m")
"""The pre-trainings of ``FEWER_CONTRASTIVE/run.sh SEED FEWER_CONTRASTIVE_RUNS/seedSEED`` (2 contrastive updates a
rollout, seeds 0-3), whose last networks (``weights/step-1003520.pt``) their arms start from; their weights are not in
git. Seeds 0 and 1 there are ``FEWER_CONTRASTIVE_AGAIN``'s."""
FEWER_CONTRASTIVE_AGAIN = Path("benchmarks/results/mspacman-2026-12-01-fewer-contrastive-1m-intel")
"""Seeds 0 and 1 of ``FEWER_CONTRASTIVE`` pre-trained again by the same command on another CPU (the first runs' weights
were gone before their arms ran): the pre-trainings the ``fewer-contrastive-seed0-*`` and ``-seed1-*`` arms start from."""
SAME_SEED_PRESET_ARMS = ("epochs-3-sign-clip-again", "second-pretraining-epochs-3-sign-clip", "third-pretraining-epochs-3-sign-clip",
                         "fourth-pretraining-epochs-3-sign-clip")
"""The arms fine-tuned from the ``pretrain`` preset's pre-training of seed 0, 1, 2 and 3 (32 contrastive updates a
rollout), with the settings of the ``fewer-contrastive-seedN-*`` arms; seed 0's at the commit of seeds 1's."""
ARM_WEIGHTS = {
    "second-pretraining-epochs-3-sign-clip": (str(SECOND_PRETRAINING / "pretrain" / "pretrained-weights.pt"), SECOND_PRETRAINING),
    "third-pretraining-epochs-3-sign-clip": (str(PRETRAINING_RUNS / "seed2" / "weights" / "step-1003520.pt"), THIRD_PRETRAINING),
    "fourth-pretraining-epochs-3-sign-clip": (str(PRETRAINING_RUNS / "seed3" / "weights" / "step-1003520.pt"), FOURTH_PRETRAINING),
    **{f"fewer-contrastive-seed{seed}-epochs-3-sign-clip": (str(FEWER_CONTRASTIVE_RUNS / f"seed{seed}" / "weights" / "step-1003520.pt"),
                                                            (FEWER_CONTRASTIVE_AGAIN if seed < 2 else FEWER_CONTRASTIVE) / f"seed{seed}")
       for seed in range(4)},
}
"""Arms fine-tuned from other weights than ``WEIGHTS``: the weights, and the results folder of their pre-training
(its ``explore/`` holds the weights' zero-shot games)."""
AGAINST = {
    **{arm: ("epochs-3-sign-clip-entropy-0.001",) for arm in ("epochs-3-sign-clip-entropy-0.001-16x64",
                                                              "epochs-3-sign-clip-entropy-0.001-temperature-0.5",
                                                              "epochs-3-sign-clip-entropy-0.001-temperature-0.1")},
    # the atari-finetune preset's settings since 1a41c8b
    "epochs-3-sign-clip-entropy-0.001-temperature-0.25": ("epochs-3-sign-clip-entropy-0.001", f"{SCRATCH}-epochs-3-sign-clip-entropy-0.001"),
    "epochs-3-sign-clip-entropy-0.001-temperature-0.25-500k": ("epochs-3-sign-clip-500k", f"{SCRATCH}-epochs-3-sign-clip-500k",
                                                               f"{SCRATCH}-epochs-3-sign-clip-entropy-0.001-500k"),
    # the off-policy arms: the convolutions alone against the whole body and against scratch
    "q-convs": ("q-body", f"{SCRATCH}-q-body"),
    # the shifted replay against the same start without it, and the convolutions against scratch with it
    f"{SCRATCH}-q-shift": (f"{SCRATCH}-q-body",),
    "q-convs-shift": ("q-convs", f"{SCRATCH}-q-shift"),
    "q-convs-shift-guide": ("q-convs-shift",),
    "q-convs-shift-guide-epsilon-0.1": ("q-convs-shift-guide",),
    # the five-seed arm against scratch with the same replay settings
    "q-convs-shift-guide-margin": ("q-convs-shift-guide", f"{SCRATCH}-q-shift"),
    # the prior against the same start without it, and against scratch with the same replay
    "q-convs-prior": ("q-convs", f"{SCRATCH}-q-body"),
    # 2 contrastive updates a rollout against the preset's 32, pre-training seed by pre-training seed
    **{f"fewer-contrastive-seed{seed}-epochs-3-sign-clip": (arm,) for seed, arm in enumerate(SAME_SEED_PRESET_ARMS)},
}
"""Arms compared in ``table`` with the arms they change settings of (on the arm's own budget), besides the baseline."""
SAME_SETTINGS = {arm: ("epochs-3-sign-clip", "epochs-3-sign-clip-again") for arm in ARM_WEIGHTS}
"""Each arm of ``ARM_WEIGHTS`` and the arms with the same settings from ``WEIGHTS``, compared in ``table`` (with
scratch's arm of those settings, ``SCRATCH-`` the first of them)."""
EARLIER_ARMS = {
    # the README's 100k table: its arms ran 74 commits apart
    "pre-trained + 100k fine-tuning, the README's arm": KNN_SCOPE / "compare-100k" / "pretrained",
    "scratch, 100k, the README's arm": Path("benchmarks/results/mspacman-2026-11-27/compare-100k/scratch"),
}
ZERO_SHOT = {
    # voidrl explore's 30 games (starts seeded 0..): the weights' own play before any fine-tuning, and the random policy's
    "uniform-random policy": (0, ("explore", KNN_SCOPE / "explore" / "random.csv"), None),
    "pre-trained weights, zero-shot": (1_000_000, ("ablation", "zero-shot-sampled-seed0.csv"),
                                        KNN_SCOPE / "explore" / "step-1003520-greedy.csv"),
    # the same games, sampled at the logits divided by a temperature (voidrl explore --temperature T, in the ablation
    # folder): where the arms of --init-temperature T start
    "pre-trained weights, zero-shot, temperature 0.5": (1_000_000, ("ablation", "zero-shot-sampled-temperature-0.5-seed0.csv"), None),
    "pre-trained weights, zero-shot, temperature 0.25": (1_000_000, ("ablation", "zero-shot-sampled-temperature-0.25-seed0.csv"), None),
    "pre-trained weights, zero-shot, temperature 0.1": (1_000_000, ("ablation", "zero-shot-sampled-temperature-0.1-seed0.csv"), None),
    "second pre-training's weights (seed 1), zero-shot": (1_000_000, ("explore", SECOND_PRETRAINING / "explore" / "step-1003520.csv"),
                                                          SECOND_PRETRAINING / "explore" / "step-1003520-greedy.csv"),
    "third pre-training's weights (seed 2), zero-shot": (1_000_000, ("explore", THIRD_PRETRAINING / "explore" / "step-1003520.csv"),
                                                         THIRD_PRETRAINING / "explore" / "step-1003520-greedy.csv"),
    "fourth pre-training's weights (seed 3), zero-shot": (1_000_000, ("explore", FOURTH_PRETRAINING / "explore" / "step-1003520.csv"),
                                                          FOURTH_PRETRAINING / "explore" / "step-1003520-greedy.csv"),
}
FIRST_GAMES = 20
"""The first games of fine-tuning, against the pre-trained policy's own score: does fine-tuning first lose it? The
first games to end are the short ones, so ``first_games`` also takes each environment's first game instead."""


def steps(arm: str) -> int:
    return ARM_STEPS.get(arm, BUDGET)


def command(arm: str, seed: int, run_dir: Path) -> list[str]:
    algo, settings = ("r2d2", Q_LEARNING) if arm in Q_ARMS else ("ppg", ["--preset", "atari"])
    start = ["train", algo] if arm.startswith(SCRATCH) else ["finetune", algo, "--from", ARM_WEIGHTS.get(arm, (WEIGHTS,))[0]]
    return [sys.executable, "-m", "voidrl", *start, "--env", "ALE/MsPacman-v5", *settings,
            "--steps", str(steps(arm)), "--seed", str(seed), "--eval-every", str(steps(arm)), "--eval-episodes", "30",
            "--torch-threads", "1", "--no-progress", "--run-dir", str(run_dir), *ARMS[arm],
            *(["--resume"] if (run_dir / "checkpoint.pt").exists() else [])]


def run_all(out: Path, arms: list[str], seeds: list[int], parallel: int) -> None:
    run_pairs(out, [(arm, seed) for seed in seeds for arm in arms], parallel)


def run_pairs(out: Path, pairs: list[tuple[str, int]], parallel: int) -> None:
    """The runs of ``pairs`` (arm, seed) in this order, ``parallel`` at a time; finished ones skipped."""
    pending = [out / arm / f"seed{seed}" for arm, seed in pairs if not (out / arm / f"seed{seed}" / "evaluations.csv").exists()]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout
    for run_dir in pending:
        run_dir.parent.mkdir(parents=True, exist_ok=True)
        (run_dir.parent / f"{run_dir.name}.COMMIT").write_text(commit)
    run_commands([command(run_dir.parent.name, int(run_dir.name.removeprefix("seed")), run_dir) for run_dir in pending], parallel, ROOT)


EXPLORE = {"explore.csv": [], "explore-greedy.csv": ["--greedy"]}
"""Each final agent's own games, the 30 of ``voidrl explore --seed 0`` (sampled and greedy): the same starts as the
pre-trained weights' zero-shot games."""


def explore_all(out: Path, arms: list[str], parallel: int) -> None:
    """``EXPLORE``'s games of every finished run of ``arms`` that lacks them."""
    commands = [[sys.executable, "-m", "voidrl", "explore", "--checkpoint", str(run_dir / "checkpoint.pt"), "--episodes", "30",
                 "--seed", "0", "--torch-threads", "1", *options, "--out", str(run_dir / name)]
                for arm in arms for run_dir in sorted((out / arm).glob("seed*")) if (run_dir / "evaluations.csv").exists()
                for name, options in EXPLORE.items() if not (run_dir / name).exists()]
    run_commands(commands, parallel, ROOT)


def collect(out: Path, destination: Path) -> None:
    for evaluations in sorted(out.glob("*/seed*/evaluations.csv")):
        run_dir = evaluations.parent
        target = destination / run_dir.relative_to(out)
        target.mkdir(parents=True, exist_ok=True)
        for name in ("config.json", "evaluations.csv", *EXPLORE):
            if (run_dir / name).exists():
                shutil.copy(run_dir / name, target / name)
        shutil.copy(run_dir.parent / f"{run_dir.name}.COMMIT", target / "COMMIT")
        for name in ("episodes.csv", "metrics.csv"):
            gzip_copy(run_dir / name, target / f"{name}.gz")


def first_games(run_dir: Path) -> list[float]:
    """The return of each environment's first game: the rows that end at ``num_envs`` x their length (every
    environment steps once per vector step from step 0). Unlike the first games to end, these are not the short ones."""
    num_envs = json.loads((run_dir / "config.json").read_text())["env"]["num_envs"]
    rows = run_csv_rows(run_dir, "episodes.csv")
    return [float(row["return"]) for row in rows if int(row["step"]) == num_envs * int(row["length"])]


def table(folder: Path, arms: set[str] | None = None) -> None:
    """Every arm's row and comparisons, or those of ``arms`` alone (the comparisons that set one of them against
    another arm)."""
    def chosen(name: str) -> bool:
        return arms is None or name in arms

    print(f"| arm | seeds | first {FIRST_GAMES} games per seed | each environment's first game, all seeds | greedy (30 games) per seed | "
          "last 100 training games per seed |")
    print("|---|---:|---|---|---|---|")
    for arm_dir in sorted(path for path in folder.iterdir() if path.is_dir() and chosen(path.name)):
        runs = sorted(arm_dir.glob("seed*"))
        first, greedy, last, each_first = [], [], [], []
        for run_dir in runs:
            returns = [float(row["return"]) for row in run_csv_rows(run_dir, "episodes.csv")]
            first.append(np.mean(returns[:FIRST_GAMES]))
            each_first += first_games(run_dir)
            last.append(run_measures(run_dir, steps(arm_dir.name))["final"])
            greedy.append(float(run_csv_rows(run_dir, "evaluations.csv")[-1]["return_mean"]))
        print(f"| {arm_dir.name} | {len(runs)} | {', '.join(f'{v:.0f}' for v in first)} | {games_cell(each_first)} | "
              f"{', '.join(f'{v:.0f}' for v in greedy)} | {', '.join(f'{v:.0f}' for v in last)} |")
    for arm_dir in sorted(path for path in folder.iterdir() if path.is_dir() and chosen(path.name)
                          and path.name != "baseline" and path.name not in ARM_STEPS and path.name not in ARM_WEIGHTS):
        compare_arms(folder, arm_dir.name, "baseline", BUDGET)
    for scratch_dir in sorted(folder.glob(f"{SCRATCH}-*")):  # pre-trained against scratch, same settings and budget
        pretrained = folder / scratch_dir.name.removeprefix(f"{SCRATCH}-")
        if not pretrained.is_dir() or not (chosen(pretrained.name) or chosen(scratch_dir.name)):
            continue
        compare_arms(folder, pretrained.name, scratch_dir.name, steps(scratch_dir.name))
    for arm, others in AGAINST.items():
        for other in others:
            if (folder / arm).is_dir() and (folder / other).is_dir() and chosen(arm):
                compare_arms(folder, arm, other, steps(arm))
    for again in sorted(path for path in folder.glob("*-again") if chosen(path.name)):  # an arm run again at a later commit, against itself at the first
        compare_arms(folder, again.name, again.name.removesuffix("-again"), BUDGET)
    for arm, first_weights_arms in SAME_SETTINGS.items():  # the second pre-training against the first and scratch, alike
        for other in (*first_weights_arms, f"{SCRATCH}-{first_weights_arms[0]}"):
            if (folder / arm).is_dir() and (folder / other).is_dir() and chosen(arm):
                compare_arms(folder, arm, other, BUDGET)
    fewer = tuple(f"fewer-contrastive-seed{seed}-epochs-3-sign-clip" for seed in range(4))
    if all((folder / arm).is_dir() for arm in (*fewer, *SAME_SEED_PRESET_ARMS)) and any(map(chosen, fewer)):
        # every fine-tuning from the four pre-trainings of each kind together (4 x 5 runs a side, not independent seeds)
        print("\nfine-tuned from the four pre-trainings with 2 contrastive updates a rollout against the four of the preset (32):\n")
        groups = {name: sorted(run for arm in arms for run in (folder / arm).glob("seed*"))
                  for name, arms in (("2 contrastive updates", fewer), ("32 (the preset)", SAME_SEED_PRESET_ARMS))}
        print(compare_runs(groups, BUDGET, folder / "fewer-contrastive-against-the-preset-all-pretrainings"))


def compare_arms(folder: Path, arm: str, other: str, budget: int) -> None:
    """Print ``compare_runs``' table of ``arm``'s seeds against ``other``'s in ``folder`` (its plot beside them)."""
    print(f"\n{arm} against {other}:\n")
    print(compare_runs({name: sorted((folder / name).glob("seed*")) for name in (arm, other)}, budget, folder / f"{arm}-against-{other}"))


def games_cell(scores: list[float]) -> str:
    """Mean +- standard error of game scores, and their number."""
    return f"{mean_sem(np.asarray(scores))} ({len(scores)} games)"


def games(path: Path) -> str:
    """``games_cell`` of the scores of ``voidrl explore``'s games in ``path``."""
    return games_cell(read_exploration(path)["score"].tolist())


def seeds_iqm(values: list[float]) -> str:
    interval = iqm_interval(np.array(values))
    return f"{interval.estimate:.1f} [{interval.low:.1f}, {interval.high:.1f}] ({len(values)} seed{'s' * (len(values) > 1)})"


def ledger(folder: Path, arms: set[str] | None = None) -> None:
    """What pre-training and what fine-tuning each contributed: the weights' zero-shot play, scratch and fine-tuned
    arms at one commit (this folder's; those of ``arms`` alone where given), the README's arms, on the same two
    measures."""
    print("| agent | reward-free steps | task steps | commit | sampled play | greedy play (30 games) |")
    print("|---|---:|---:|---|---|---|")
    for name, (reward_free, (where, sampled), greedy) in ZERO_SHOT.items():
        sampled_path = folder / sampled if where == "ablation" else ROOT / sampled
        greedy_cell = games(ROOT / greedy) if greedy else "-"
        print(f"| {name} | {reward_free:,} | 0 | - | {games(sampled_path)} | {greedy_cell} |")
    arms = {arm_dir.name if arm_dir.name.startswith(SCRATCH) else f"pre-trained + fine-tuning, {arm_dir.name}": arm_dir
            for arm_dir in sorted(path for path in folder.iterdir() if path.is_dir() and (arms is None or path.name in arms))}
    for name, arm_dir in {**arms, **{name: ROOT / path for name, path in EARLIER_ARMS.items()}}.items():
        runs = sorted(arm_dir.glob("seed*"))
        budget = steps(arm_dir.name)
        last = [run_measures(run, budget)["final"] for run in runs]
        greedy = [float(run_csv_rows(run, "evaluations.csv")[-1]["return_mean"]) for run in runs]
        commits = sorted({(run / "COMMIT").read_text().strip() for run in runs})
        reward_free = "0" if name.startswith(SCRATCH) else "1,000,000"
        print(f"| {name} | {reward_free} | {budget:,} | {', '.join(commits)} | last 100 training games within {budget // 1000:,}k: {seeds_iqm(last)} | "
              f"{seeds_iqm(greedy)} |")


def same_games(folder: Path) -> None:
    """Each arm's final agents on the zero-shot games' starts (``EXPLORE``), sampled and greedy, against their
    weights' own zero-shot play: the IQM over seeds of each agent's mean score, and its ratio to the zero-shot mean."""
    first_weights = {"explore.csv": folder / "zero-shot-sampled-seed0.csv", "explore-greedy.csv": ROOT / KNN_SCOPE / "explore" / "step-1003520-greedy.csv"}
    zero_shot = {arm: {name: ROOT / pretraining / "explore" / f"step-1003520{suffix}.csv" for name, suffix in (("explore.csv", ""), ("explore-greedy.csv", "-greedy"))}
                 for arm, (_, pretraining) in ARM_WEIGHTS.items()}  # the weights' own games, as EXPLORE's file names
    print("| arm | sampled: IQM of the agents' means (ratio to zero-shot) | greedy: IQM of the agents' means (ratio to zero-shot) |")
    print("|---|---|---|")
    for arm_dir in sorted(path for path in folder.iterdir() if path.is_dir() and any(path.glob("seed*/explore.csv"))):
        cells = []
        for name, reference in zero_shot.get(arm_dir.name, first_weights).items():
            means = [np.mean([float(row["score"]) for row in run_csv_rows(run, name)]) for run in sorted(arm_dir.glob("seed*"))]
            own = np.mean([float(row["score"]) for row in run_csv_rows(reference.parent, reference.name)])
            interval = iqm_interval(np.array(means))
            cells.append(f"{seeds_iqm(means)} ({interval.estimate / own:.2f}x, interval {interval.low / own:.2f}-{interval.high / own:.2f}x)")
        print(f"| {arm_dir.name} | {' | '.join(cells)} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("runs/finetune-ablation"))
    parser.add_argument("--arms", nargs="+", choices=sorted(ARMS), default=None,
                        help="the arms to run (default: all), or with --table the arms to tabulate (default: all)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--parallel", type=int, default=2, help="runs at a time, one torch thread each")
    parser.add_argument("--explore", action="store_true", help="play EXPLORE's games with the finished runs' agents")
    parser.add_argument("--collect", type=Path, metavar="DIR")
    parser.add_argument("--table", type=Path, metavar="DIR")
    args = parser.parse_args()
    arms = args.arms or list(ARMS)
    if args.explore:
        explore_all(args.out, arms, args.parallel)
    elif args.collect:
        collect(args.out, args.collect)
    elif args.table:
        only = None if args.arms is None else set(args.arms)
        table(args.table, only)
        print("\nThe ledger:\n")
        ledger(args.table, only)
        if only is None:
            print("\nOn the zero-shot games' starts:\n")
            same_games(args.table)
    else:
        run_all(args.out, arms, args.seeds, args.parallel)


if __name__ == "__main__":
    main()
