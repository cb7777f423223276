"""Every table and plot of the Ms. Pac-Man pre-training experiment, rebuilt from the files committed under a results
folder (issue 48):

    python benchmarks/mspacman_tables.py benchmarks/results/mspacman-2026-11-27

The folder holds (each part optional; the tables of the parts present are printed):

- ``pretrain/``: the reward-free run's config.json, COMMIT, metrics.csv.gz and episodes.csv.gz, and
  ``pretrained-weights.pt`` (``voidrl export --format weights``);
- ``explore/*.csv``: ``voidrl explore --out`` of the uniform-random policy (random.csv) and of checkpoints
  (step-N.csv for the pre-training's networks at step N, sampled actions; NAME-greedy.csv acting greedily);
- ``compare-100k/`` and ``compare-500k/``: ``pretrained/seedK`` and ``scratch/seedK`` runs (config.json, COMMIT,
  episodes.csv.gz, metrics.csv.gz, evaluations.csv: the greedy evaluation of the final agent, explore.csv: the
  final agent's sampled games, ``voidrl explore --checkpoint``); a budget's scratch arm may instead be another
  results folder's (``--scratch-100k``, ``--scratch-500k``).

It writes ``pretrain-curves.png`` and, per budget, ``compare-N-comparison.md``/``.png`` into the folder. With
``--against OTHER`` (another such folder) it sets the two pre-trainings' zero-shot games side by side at the steps
both measured and, at each budget both fine-tuned, their pre-trained arms against each other
(``compare-N-against-OTHER.md``/``.png``), e.g.

    python benchmarks/mspacman_tables.py benchmarks/results/mspacman-2026-11-28-intrinsic-gamma \
        --against benchmarks/results/mspacman-2026-11-27
"""

from __future__ import annotations

import argparse
import csv
import math
import re
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from voidrl.io.report import compare_runs, pyplot, run_csv_file, run_csv_rows  # noqa: E402

LN_18 = math.log(18)
ANCHORS = [
    # (method, budget, score) as the papers report them
    ("uniform-random policy (Atari-100k tables)", "-", 307.3),
    ("published PPG attempt (Müller 2022, section 6.2: 'only yields around 450' at APT's 100k), after 62.5M "
     "reward-free APT steps", "100k agent steps", 450.0),
    ("published PPG attempt (Müller 2022, section 6.2), after 62.5M reward-free APT steps", "10M agent steps, 5 runs", 1212.9),
    ("published PPG attempt (Müller 2022, section 6.2), from scratch", "10M agent steps, 5 runs", 1441.3),
    ("APT (off-policy, DrQ), after pre-training", "100k agent steps", 2827.1),
    ("SimPLe", "100k agent steps", 1480.0),
    ("CURL", "100k agent steps", 1465.5),
    ("Data-efficient Rainbow", "100k agent steps", 1204.1),
    ("PPO (Schulman et al. 2017)", "10M agent steps (40M frames)", 2096.5),
    ("PPO, RL Baselines3 Zoo", "10M agent steps", 1754.4),
]
PROTOCOL = ("Ours: ALE v5's Ms. Pac-Man without sticky actions, the full 18 actions, up to 30 no-ops at reset, a life "
            "loss ends a training episode but not the game, scores of whole games. The papers' details (sticky actions, "
            "action set, life loss, evaluation episodes) differ from each other and from ours; the 100k-step figures "
            "are 400k frames.")


def read_exploration(path: Path) -> dict[str, np.ndarray]:
    with path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    return {name: np.array([float(row[name]) for row in rows if row[name] != ""]) for name in ("score", "length", "positions")}


def mean_sem(values: np.ndarray) -> str:
    return f"{values.mean():.1f} +- {values.std(ddof=1) / math.sqrt(len(values)):.1f}"


def exploration_table(folder: Path, seed: int = 0) -> list[str]:
    files = sorted(folder.glob("*.csv"), key=lambda p: (p.stem != "random", int(m.group(1)) if (m := re.match(r"step-(\d+)", p.stem)) else 0, p.stem))
    if not files:
        return []
    measured = {path.stem: read_exploration(path) for path in files}
    random = measured.get("random")
    lines = [f"## Exploration: whole games of Ms. Pac-Man (`voidrl explore`, seed {seed}; mean +- standard error)", "",
             "| policy | games | score | episode length (steps) | distinct positions | score / random | positions / random "
             "| positions per step | r(length, positions) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, values in measured.items():
        ratios = ["", ""] if random is None or name == "random" else [
            f"{values['score'].mean() / random['score'].mean():.2f}x", f"{values['positions'].mean() / random['positions'].mean():.2f}x"]
        per_step = values["positions"].sum() / values["length"].sum()
        correlation = np.corrcoef(values["length"], values["positions"])[0, 1]
        lines.append(f"| {name} | {len(values['score'])} | {mean_sem(values['score'])} | {mean_sem(values['length'])} | "
                     f"{mean_sem(values['positions'])} | {' | '.join(ratios)} | {per_step:.3f} | {correlation:.2f} |")
    return lines + ["", "Positions per step: all games' distinct positions over all their steps; r: the correlation over "
                    "the games of each game's length and its distinct positions.", ""]


def pretrain_table(run_dir: Path, every: int) -> list[str]:
    rows = run_csv_rows(run_dir, "metrics.csv")
    episodes = run_csv_rows(run_dir, "episodes.csv")
    steps, returns = np.array([float(r["step"]) for r in episodes]), np.array([float(r["return"]) for r in episodes])
    lines = [f"## Reward-free pre-training ({run_dir}; commit {read_commit(run_dir)})", "",
             f"Each row: the update at or after the step; game score: mean of the training games that ended in the "
             f"preceding {every:,} steps (sampled actions, task reward never seen). Entropy of ln 18 = {LN_18:.3f} is uniform.", "",
             "| step | entropy | particle reward | particle return per life | top-1 | effective rank (of 15) | game score |",
             "|---:|---:|---:|---:|---:|---:|---:|"]
    milestones, next_step = [], every
    for index, row in enumerate(rows):
        step = float(row["step"])
        if step >= next_step or index == len(rows) - 1:
            milestones.append(row)
            next_step = (step // every + 1) * every
    for row in milestones:
        step = float(row["step"])
        recent = returns[(steps > step - every) & (steps <= step)]
        lines.append(f"| {int(step):,} | {float(row['train/entropy']):.3f} | {float(row['apt/particle_reward']):.3f} | "
                     f"{cell(row, 'apt/episode_particle_return', '.1f')} | {cell(row, 'apt/contrastive_accuracy', '.3f')} | "
                     f"{cell(row, 'apt/latent_effective_rank', '.2f')} | {f'{recent.mean():.0f}' if len(recent) else ''} |")
    return lines + [""]


def schedule_comparison(new_run: Path, published_run: Path) -> list[str]:
    """This preset's run against the published schedule's (pretrain-published, same seed and representation) at the
    last update the published run reached: the policy's entropy, the reward, the representation, the game score."""
    published = run_csv_rows(published_run, "metrics.csv")
    step = float(published[-1]["step"])
    new = [row for row in run_csv_rows(new_run, "metrics.csv") if float(row["step"]) <= step]
    lines = [f"## The 1-2M-step preset against the published schedule, at {int(step):,} steps (seed 0)", "",
             "| preset | step | entropy (ln 18 = 2.890) | particle reward | top-1 | effective rank | training games' score (last 20) |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for name, row in (("pretrain (1-2M steps)", new[-1]), ("pretrain-published", published[-1])):
        lines.append(f"| {name} | {int(float(row['step'])):,} | {float(row['train/entropy']):.3f} | {float(row['apt/particle_reward']):.3f} | "
                     f"{cell(row, 'apt/contrastive_accuracy', '.3f')} | {cell(row, 'apt/latent_effective_rank', '.2f')} | "
                     f"{cell(row, 'rollout/recent_return_mean', '.0f')} |")
    shown = published_run.resolve().relative_to(ROOT) if published_run.resolve().is_relative_to(ROOT) else published_run
    return lines + ["", f"pretrain-published: {shown} (the 100k health run of RESULTS.md's 'Pre-training at 150 steps/s')", ""]


def snapshots_against(folder: Path, other: Path) -> list[str]:
    """The zero-shot games of two pre-trainings' networks along the way (each folder's ``explore/step-N.csv``, as
    ratios to its own ``explore/random.csv``) and their policies' entropy at those steps."""
    lines = [f"## Zero-shot games along the way: {folder.name} against {other.name} (30 sampled games each, seed 0)", "",
             "Each cell: this run / the other; ratios to the uniform-random policy's games.", "",
             "| step | entropy | distinct positions / random | score / random | episode length |",
             "|---:|---:|---:|---:|---:|"]
    runs = []
    for root in (folder, other):
        random = read_exploration(root / "explore" / "random.csv")
        games = {int(m.group(1)): read_exploration(p) for p in (root / "explore").glob("step-*.csv")
                 if (m := re.fullmatch(r"step-(\d+)", p.stem))}
        entropy = {int(float(row["step"])): float(row["train/entropy"]) for row in run_csv_rows(root / "pretrain", "metrics.csv")}
        runs.append((random, games, entropy))
    for step in sorted(set(runs[0][1]) & set(runs[1][1])):
        cells = []
        for name in ("entropy", "positions", "score", "length"):
            values = []
            for random, games, entropy in runs:
                if name == "entropy":
                    values.append(f"{entropy[max(s for s in entropy if s <= step)]:.2f}")
                elif name == "length":
                    values.append(f"{games[step][name].mean():.0f}")
                else:
                    values.append(f"{games[step][name].mean() / random[name].mean():.2f}x")
            cells.append(" / ".join(values))
        lines.append(f"| {step:,} | {' | '.join(cells)} |")
    return lines + [""]


def device_presets_table(folder: Path, random_file: Path) -> list[str]:
    """Each preset's pre-training on a lent GPU (``benchmarks/bench_device.py``: PRESET/metrics, episodes and the
    final networks' zero-shot games in explore.csv) at its last update, beside the uniform-random policy's games."""
    lines = [f"## Pre-training on a lent GPU ({folder}; bench.log has the machine and the speeds)", "",
             "| preset (seed 0) | step | entropy | top-1 | effective rank | zero-shot score | length | positions |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for preset in sorted(path.parent.name for path in folder.glob("*/explore.csv")):
        last = run_csv_rows(folder / preset, "metrics.csv")[-1]
        games = read_exploration(folder / preset / "explore.csv")
        lines.append(f"| {preset} | {int(float(last['step'])):,} | {float(last['train/entropy']):.3f} | "
                     f"{cell(last, 'apt/contrastive_accuracy', '.3f')} | {cell(last, 'apt/latent_effective_rank', '.2f')} | "
                     f"{mean_sem(games['score'])} | {games['length'].mean():.0f} | {mean_sem(games['positions'])} |")
    if random_file.exists():
        games = read_exploration(random_file)
        lines.append(f"| uniform random (this folder's explore/random.csv) | | {LN_18:.3f} | | | {mean_sem(games['score'])} | "
                     f"{games['length'].mean():.0f} | {mean_sem(games['positions'])} |")
    return lines + [""]


def cell(row: dict[str, str], name: str, spec: str) -> str:
    return format(float(row[name]), spec) if row.get(name) else ""


def read_commit(run_dir: Path) -> str:
    path = run_dir / "COMMIT"
    return path.read_text().strip() if path.exists() else "not recorded"


def pretrain_plot(run_dir: Path, explore: Path, out: Path) -> Path:
    rows = run_csv_rows(run_dir, "metrics.csv")
    step = np.array([float(r["step"]) for r in rows])
    episodes = run_csv_rows(run_dir, "episodes.csv")
    game_steps, game_returns = np.array([float(r["step"]) for r in episodes]), np.array([float(r["return"]) for r in episodes])
    plt = pyplot()
    figure, axes = plt.subplots(2, 2, figsize=(11, 7))
    axes[0, 0].plot(step, [float(r["train/entropy"]) for r in rows])
    axes[0, 0].axhline(LN_18, color="grey", linestyle=":", label="ln 18 (uniform)")
    axes[0, 0].set(title="policy entropy", xlabel="environment steps")
    axes[0, 0].legend()
    returns = [(s, float(r["apt/episode_particle_return"])) for s, r in zip(step, rows) if r.get("apt/episode_particle_return")]
    axes[0, 1].plot(*zip(*returns))
    axes[0, 1].set(title="particle return per training episode (a life)", xlabel="environment steps")
    window = min(50, len(game_returns))
    smoothed = np.convolve(game_returns, np.ones(window) / window, mode="valid")
    axes[1, 0].plot(game_steps, game_returns, ".", alpha=0.2, markersize=3)
    axes[1, 0].plot(game_steps[window - 1:], smoothed, label=f"mean of {window} games")
    axes[1, 0].set(title="game score of the training games (never rewarded)", xlabel="environment steps")
    snapshots = sorted((int(m.group(1)), read_exploration(p)) for p in explore.glob("step-*.csv") if (m := re.fullmatch(r"step-(\d+)", p.stem)))
    if snapshots:
        x = [s for s, _ in snapshots]
        for name, marker in (("positions", "o-"), ("score", "s-")):
            axes[1, 1].plot(x, [v[name].mean() for _, v in snapshots], marker, label=f"{name}, pre-trained (sampled)")
        random_file = explore / "random.csv"
        if random_file.exists():
            random = read_exploration(random_file)
            for name, colour in (("positions", "C0"), ("score", "C1")):
                axes[1, 1].axhline(random[name].mean(), color=colour, linestyle=":", label=f"{name}, uniform random")
        axes[1, 1].set(title="zero-shot games (voidrl explore, 30 each)", xlabel="pre-training steps")
        axes[1, 1].legend(fontsize=8)
    axes[1, 0].legend()
    figure.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(out, dpi=100)
    plt.close(figure)
    return out


FIRST_SCRATCH_500K = ROOT / "benchmarks/results/mspacman-2026-11-25/compare"
"""The first 500k scratch arm (5 seeds at 353c7a5, not greedy-evaluated), for folders without their own."""


def final_return(run_dir: Path, budget: int, episodes: int = 100) -> float:
    """The mean score of the last ``episodes`` training games a run finished within ``budget`` steps."""
    rows = [row for row in run_csv_rows(run_dir, "episodes.csv") if int(row["step"]) <= budget]
    return float(np.mean([float(row["return"]) for row in rows[-episodes:]]))


def comparison(folder: Path, budget: int, scratch: Path | None) -> tuple[list[str], list[tuple[str, str, float]]]:
    """The budget's compare table, each final agent's evaluations, and this folder's rows for the anchors table."""
    pretrained = sorted((folder / "pretrained").glob("seed*"))
    scratch_runs = sorted(((scratch or folder) / "scratch").glob("seed*"))
    if not pretrained or not scratch_runs:
        return [], []
    table = compare_runs({"pre-trained": pretrained, "scratch": scratch_runs}, budget, folder.parent / f"{folder.name}-comparison")
    lines = [f"## Fine-tuning at {budget:,} steps: {folder.name} (scratch: {(scratch or folder) / 'scratch'})", "", table, "",
             "Each final agent: greedy evaluation (30 games; greedy Ms. Pac-Man without sticky actions can replay one game "
             "30 times, hence standard deviations of 0) and sampled games (`voidrl explore --checkpoint`, 30 games, "
             "mean +- standard error).", "",
             "| arm | seed | commit | greedy (games) | sampled score | sampled distinct positions |", "|---|---:|---|---:|---:|---:|"]
    ours = []
    for arm, runs in (("pre-trained", pretrained), ("scratch", scratch_runs)):
        for run_dir in runs:
            evaluations = run_csv_rows(run_dir, "evaluations.csv") if run_csv_file(run_dir, "evaluations.csv") else []
            last = evaluations[-1] if evaluations else None
            sampled = read_exploration(run_dir / "explore.csv") if (run_dir / "explore.csv").exists() else None
            lines.append(f"| {arm} | {run_dir.name.removeprefix('seed')} | {read_commit(run_dir)} | "
                         + (f"{float(last['return_mean']):.1f} +- {float(last['return_std']):.1f} ({last['episodes']})" if last else "not evaluated")
                         + (f" | {mean_sem(sampled['score'])} | {mean_sem(sampled['positions'])} |" if sampled is not None else " | | |"))
        finals = [final_return(run_dir, budget) for run_dir in runs]
        ours.append((f"voidrl PPG {'after 1M reward-free APT steps' if arm == 'pre-trained' else 'from scratch'} "
                     f"({folder.name}, mean of {len(runs)} seeds' last 100 training games)", f"{budget // 1000}k agent steps",
                     float(np.mean(finals))))
    return lines + [""], ours


def pretrained_against(folder: Path, other: Path) -> list[str]:
    """The two pre-trainings' fine-tuned arms against each other, at each budget both ran (same settings, seeds)."""
    lines = []
    for name, budget in (("compare-100k", 100_000), ("compare-500k", 500_000)):
        ours, theirs = (sorted((root / name / "pretrained").glob("seed*")) for root in (folder, other))
        if ours and theirs:
            table = compare_runs({folder.name: ours, other.name: theirs}, budget, folder / f"{name}-against-{other.name}")
            lines += [f"## Fine-tuned at {budget:,} steps from each pre-training: {folder.name} against {other.name}", "", table, ""]
    return lines


def anchors_table(ours: list[tuple[str, str, float]]) -> list[str]:
    lines = ["## Anchors: published figures (not re-run here) and this folder's", "", PROTOCOL, "",
             "| method | budget | score |", "|---|---|---:|"]
    lines += [f"| {method} | {budget} | {score:,.1f} |" for method, budget, score in ANCHORS]
    lines += [f"| **{method}** | {budget} | **{score:,.1f}** |" for method, budget, score in ours]
    return lines + [""]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--every", type=int, default=100_000, help="steps between rows of the pre-training table")
    parser.add_argument("--published-run", type=Path, default=ROOT / "benchmarks/results/pretrain-2026-11-25/envs16",
                        help="a run of the pretrain-published preset to set beside this one (its 100k health run)")
    parser.add_argument("--scratch-500k", type=Path, default=None,
                        help="the folder whose scratch/seedK runs are the 500k budget's scratch arm (default: compare-500k's "
                             "own; where it has none, the first one, mspacman-2026-11-25/compare)")
    parser.add_argument("--scratch-100k", type=Path, default=None,
                        help="the folder whose scratch/seedK runs are the 100k budget's scratch arm (default: "
                             "compare-100k's own)")
    parser.add_argument("--explore-seed", type=int, default=0,
                        help="the games' seed (voidrl explore --seed) of the folder's explore/*.csv, for the table's title")
    parser.add_argument("--against", type=Path, default=None,
                        help="another pre-training's results folder (pretrain/, explore/): compare the zero-shot games "
                             "of both runs' networks at the steps both measured, instead of the published schedule")
    args = parser.parse_args()
    if args.scratch_500k is None and not (args.folder / "compare-500k" / "scratch").is_dir():
        args.scratch_500k = FIRST_SCRATCH_500K
    lines = exploration_table(args.folder / "explore", args.explore_seed)
    if (args.folder / "pretrain").is_dir():
        lines += pretrain_table(args.folder / "pretrain", args.every)
        if args.against is not None:
            lines += snapshots_against(args.folder, args.against)
        elif args.published_run.is_dir():
            lines += schedule_comparison(args.folder / "pretrain", args.published_run)
        for device_folder in sorted(args.folder.glob("gpu-*")):
            lines += device_presets_table(device_folder, args.folder / "explore" / "random.csv")
        lines += [f"Curves: {pretrain_plot(args.folder / 'pretrain', args.folder / 'explore', args.folder / 'pretrain-curves.png')}", ""]
    ours = []
    if (args.folder / "explore" / "random.csv").exists():
        random = read_exploration(args.folder / "explore" / "random.csv")["score"]
        ours.append((f"uniform-random policy (voidrl explore --random, {len(random)} games)", "-", float(random.mean())))
    for name, budget, scratch in (("compare-100k", 100_000, args.scratch_100k), ("compare-500k", 500_000, args.scratch_500k)):
        if (args.folder / name).is_dir():
            table, rows = comparison(args.folder / name, budget, scratch)
            lines += table
            ours += rows
    if args.against is not None:
        lines += pretrained_against(args.folder, args.against)
    print("\n".join(lines + anchors_table(ours)))


if __name__ == "__main__":
    main()
