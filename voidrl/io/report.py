"""Learning-curve statistics across seeds: final-return tables, mean curves with 95% bands, best-score violins."""

from __future__ import annotations

import csv
import fnmatch
import gzip
import json
import math
import zlib
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from voidrl.extras import require
from voidrl.math.intervals import Interval, difference_interval, group_interval, t_quantile, uses_rliable, verdict

def mean_and_interval(values: np.ndarray, axis: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean, sample std and half-width of the 95% t-interval of the mean along ``axis``."""
    n = values.shape[axis]
    mean = values.mean(axis)
    if n < 2:
        return mean, np.zeros_like(mean), np.full_like(mean, np.nan)
    std = values.std(axis, ddof=1)
    return mean, std, t_quantile(0.975, n - 1) * std / math.sqrt(n)


def open_csv(path: Path) -> TextIO:
    """A CSV file opened for reading as text, gunzipped where its name ends in .gz."""
    return gzip.open(path, "rt", newline="") if path.suffix == ".gz" else open(path, newline="")


def run_csv_file(run_dir: str | Path, name: str) -> Path | None:
    """A run's ``name`` (episodes.csv, metrics.csv), or its gzipped copy ``name.gz`` (as benchmark results are
    committed); None: neither."""
    for candidate in (name, f"{name}.gz"):
        if (Path(run_dir) / candidate).is_file():
            return Path(run_dir) / candidate
    return None


def run_csv_rows(run_dir: str | Path, name: str) -> list[dict[str, str]]:
    """The rows of ``run_csv_file(run_dir, name)``; FileNotFoundError if neither file exists."""
    path = run_csv_file(run_dir, name)
    if path is None:
        raise FileNotFoundError(f"{str(Path(run_dir) / name)!r} does not exist, nor a gzipped copy")
    with open_csv(path) as handle:
        return list(csv.DictReader(handle))


def read_columns(path: Path, columns: tuple[str, ...]) -> list[np.ndarray]:
    """The named columns of a CSV file (gzipped where its name ends in .gz) as float arrays ``[rows]``; ValueError
    naming the file if it lacks one, or cannot be read as CSV text (damaged, not UTF-8)."""
    try:
        with open_csv(path) as handle:
            reader = csv.DictReader(handle)
            missing = [name for name in columns if name not in (reader.fieldnames or [])]
            if missing:
                raise ValueError(f"{str(path)!r} has no {', '.join(missing)} column")
            rows = list(reader)
    except (OSError, EOFError, zlib.error, UnicodeDecodeError, csv.Error) as error:  # gzip.BadGzipFile is an OSError
        raise ValueError(f"{str(path)!r} cannot be read as CSV text ({type(error).__name__}: {error})") from None
    try:
        return [np.array([float(row[name]) for row in rows]) for name in columns]
    except (TypeError, ValueError):
        raise ValueError(f"{str(path)!r} has a short or non-numeric row") from None


def read_episodes(run_dir: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """``(steps [E], returns [E])`` from a run's episodes.csv (or episodes.csv.gz); ValueError naming the file and the
    first bad row where a return is not finite, a length is not positive or the steps go backwards."""
    path = run_csv_file(run_dir, "episodes.csv") or Path(run_dir) / "episodes.csv"
    steps, returns, lengths = read_columns(path, ("step", "return", "length"))
    problems = [(~np.isfinite(returns), "a return that is not finite"), (~(lengths > 0), "a length that is not positive"),
                (~np.isfinite(steps) | (steps < 0), "a step that is not a count"),
                (np.r_[False, np.diff(steps) < 0], "a step before the previous row's")]
    for bad, what in problems:
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise ValueError(f"{str(path)!r} row {row + 1} holds {what} (step {steps[row]:g}, return {returns[row]:g}, "
                             f"length {lengths[row]:g}); not a run's episodes as voidrl writes them")
    return steps.astype(np.int64), returns


def read_evaluations(run_dir: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """``(steps [K], mean returns [K])`` from a run's evaluations.csv (or its gzipped copy); empty when it has none."""
    path = run_csv_file(run_dir, "evaluations.csv")
    if path is None:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    steps, means = read_columns(path, ("step", "return_mean"))
    return steps.astype(np.int64), means


def trailing_means(returns: np.ndarray, window: int) -> np.ndarray:
    """``[E]``: at each episode, the mean return of the last ``window`` episodes up to it (fewer at the start)."""
    sums = np.concatenate([[0.0], np.cumsum(returns)])
    ends = np.arange(1, len(returns) + 1)
    starts = np.maximum(ends - window, 0)
    return (sums[ends] - sums[starts]) / (ends - starts)


def best_window_mean(returns: np.ndarray, window: int) -> float:
    """Best mean of ``window`` consecutive returns (of all of them when fewer); NaN when there are none."""
    if not len(returns):
        return float("nan")
    window = min(window, len(returns))
    sums = np.concatenate([[0.0], np.cumsum(returns)])
    return float((sums[window:] - sums[:-window]).max() / window)


def latest_at(steps: np.ndarray, values: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """``[G]``: at each ``grid`` step, the latest of ``values [K]`` measured at or before it (NaN before the
    first); ``steps [K]`` is non-decreasing. This puts runs measured at different steps on one grid."""
    if not len(steps):
        return np.full(len(grid), np.nan)
    index = np.searchsorted(steps, grid, side="right") - 1
    return np.where(index >= 0, values[np.maximum(index, 0)], np.nan)


def mean_curve(curves: list[tuple[np.ndarray, np.ndarray]], grid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean ``[G]`` and 95% t-interval half-width ``[G]`` across runs of their curves ``(steps [K], values [K])``,
    each read on ``grid`` with ``latest_at``."""
    mean, _, half = mean_and_interval(np.stack([latest_at(steps, values, grid) for steps, values in curves]))
    return mean, half


def final_return(run_dir: str | Path, window: int = 100) -> float:
    """Mean return of the run's last ``window`` episodes (NaN if it finished none)."""
    _, returns = read_episodes(run_dir)
    return float(returns[-window:].mean()) if len(returns) else float("nan")


def curve(run_dir: str | Path, grid: np.ndarray, window: int = 100) -> np.ndarray:
    """At each grid step, the mean return of the last ``window`` episodes finished by then (NaN before any)."""
    steps, returns = read_episodes(run_dir)
    return latest_at(steps, trailing_means(returns, window), grid)


def pyplot():
    """``matplotlib.pyplot`` on the Agg backend (files only, no display needed); ``MissingExtra`` without the
    ``analysis`` extra."""
    matplotlib = require("matplotlib", "analysis", "a plot")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


EARLY_FRACTIONS = (0.1, 0.25)
"""Budget fractions at which ``run_measures`` reads the early return."""


def run_measures(run_dir: str | Path, total_steps: int, window: int = 100, points: int = 100) -> dict[str, float]:
    """A run's sample-efficiency measures, all from its training episodes finished within ``total_steps``
    (so a longer run, or one stopped later, is measured at the same budget):

    - ``final``: mean return of the last ``window`` episodes;
    - ``auc``: the area under the learning curve divided by the budget, i.e. the mean over ``points``
      evenly spaced steps in (0, total_steps] of the mean return of the last ``window`` episodes finished
      by that step (steps before the first finished episode are left out);
    - ``at_10%``, ``at_25%``: that curve at 10% and 25% of the budget (NaN before any episode ended).
    """
    grid = np.linspace(0, total_steps, points + 1)[1:]
    steps, returns = read_episodes(run_dir)
    means = trailing_means(returns, window)
    learning_curve = latest_at(steps, means, grid)
    early = latest_at(steps, means, np.array([f * total_steps for f in EARLY_FRACTIONS]))
    return {
        "final": float(learning_curve[-1]),
        "auc": float(np.nanmean(learning_curve)) if np.isfinite(learning_curve).any() else float("nan"),
        **{f"at_{round(100 * f)}%": float(value) for f, value in zip(EARLY_FRACTIONS, early)},
    }


def measure_titles(window: int) -> dict[str, str]:
    return {"final": f"final return (last {window} episodes)", "auc": "AUC (mean return over the budget)",
            **{f"at_{round(100 * f)}%": f"return at {round(100 * f)}% of the budget" for f in EARLY_FRACTIONS}}


def _interval(interval: Interval) -> str:
    """``estimate [low, high]``, with two decimals where every number is below 10 (returns of tasks scored in
    [0, 1], such as MiniGrid's), one otherwise."""
    numbers = [x for x in interval if not np.isnan(x)]
    decimals = 2 if max(abs(x) for x in numbers) < 10 else 1
    if np.isnan(interval.low):
        return f"{interval.estimate:.{decimals}f}"
    return f"{interval.estimate:.{decimals}f} [{interval.low:.{decimals}f}, {interval.high:.{decimals}f}]"


def compare_runs(groups: dict[str, list[Path]], total_steps: int, out_prefix: Path, window: int = 100) -> str:
    """Write ``<out_prefix>.md`` (the table) and ``<out_prefix>.png`` (mean curves) for groups of runs;
    returns the markdown table.

    One row per measure of ``run_measures``: each group's aggregate over its runs with a 95% interval
    and, for exactly two groups, the first minus the second with its own interval and the verdict
    (helped, hurt, within noise). Aggregates and intervals: see ``voidrl.math.intervals``.
    """
    names = list(groups)
    measures = {name: [run_measures(d, total_steps, window) for d in groups[name]] for name in names}
    titles = measure_titles(window)
    two = len(names) == 2
    header = ["measure", *(f"{name} (n={len(groups[name])})" for name in names)]
    if two:
        header += [f"{names[0]} - {names[1]}", "verdict"]
    lines = ["| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(names) + 2 * two)]
    robust = uses_rliable(*groups.values())
    for key, title in titles.items():
        values = {name: np.array([m[key] for m in measures[name]]) for name in names}
        finite = {name: v[np.isfinite(v)] for name, v in values.items()}
        if any(not len(v) for v in finite.values()):
            lines.append(f"| {title} | " + " | ".join("no episode yet" for _ in names) + " |" + " |" * 2 * two)
            continue
        cells = [_interval(group_interval(finite[name], *finite.values())) for name in names]
        if two:
            difference = difference_interval(finite[names[0]], finite[names[1]])
            cells += [_interval(difference), verdict(difference)]
        lines.append(f"| {title} | " + " | ".join(cells) + " |")
    method = ("interquartile mean over seeds with a 95% stratified-bootstrap interval (rliable); difference of "
              "interquartile means with an independent bootstrap of each group" if robust else
              "mean over seeds with a 95% Student-t interval; difference of means with Welch's interval "
              "(from 5 seeds per group: interquartile means and rliable's bootstrap)")
    table = "\n".join(lines)
    note = (f"Each cell: {method}. Verdict: helped or hurt when the difference's interval excludes 0, else within "
            f"noise. AUC is the mean, over 100 evenly spaced steps of the {total_steps:,}-step budget, of the mean "
            f"return of the last {window} episodes finished by then.")
    grid = np.linspace(0, total_steps, 60)[1:]
    plt = pyplot()
    figure, axes = plt.subplots(figsize=(7, 4.5))
    for name, run_dirs in groups.items():
        curves = np.stack([curve(d, grid, window) for d in run_dirs])
        curve_mean, _, curve_half = mean_and_interval(curves)
        _plot_band(axes, grid, curve_mean, curve_half, f"{name} (n={len(run_dirs)})")
    axes.set_xlabel("environment steps")
    axes.set_ylabel(f"mean return of the last {window} episodes")
    axes.legend()
    axes.grid(alpha=0.3)
    figure.tight_layout()
    out_prefix.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(out_prefix.with_name(out_prefix.name + ".png"), dpi=120)
    plt.close(figure)
    out_prefix.with_name(out_prefix.name + ".md").write_text(f"{table}\n\n{note} Plot bands: 95% Student-t intervals of the mean.\n")
    return f"{table}\n\n{note}"


def group_runs(run_dirs: list[Path], labels: list[tuple[str, str]]) -> dict[str, list[Path]]:
    """Runs by group: the first ``(name, glob)`` of ``labels`` whose glob matches a run's path, else
    ``"<algo> <env>"`` from its config.json. Groups in order of ``labels``, then of first appearance."""
    groups: dict[str, list[Path]] = {name: [] for name, _ in labels}
    for run_dir in run_dirs:
        name = next((name for name, pattern in labels if fnmatch.fnmatch(run_dir.as_posix(), pattern)), None)
        if name is None:
            config_path = run_dir / "config.json"
            if not config_path.is_file():
                raise ValueError(f"{str(config_path)!r} does not exist; name the run's group with --label NAME=GLOB")
            try:
                config = json.loads(config_path.read_text())
                name = f"{config['algo']} {config['run']['env']}"
            except (ValueError, KeyError, TypeError):
                raise ValueError(f"{str(config_path)!r} is not a voidrl config (no algo and run.env)") from None
        groups.setdefault(name, []).append(run_dir)
    unmatched = [f"{name}={pattern}" for name, pattern in labels if not groups[name]]
    if unmatched:
        raise ValueError(f"--label {unmatched[0]} matches none of the run directories")
    return groups


def plot_runs(groups: dict[str, list[Path]], out_prefix: Path, window: int = 100) -> tuple[Path, Path]:
    """Learning curves to ``<out_prefix>-curves.png`` and best scores to ``<out_prefix>-best.png``.

    Curves: per group, the mean over its runs with a 95% t-band, of the training return (mean of the last
    ``window`` episodes, over the steps every run reached) and of the evaluation return (evaluations.csv).
    Best scores: a violin per group of each run's best evaluation mean, or, for a run without evaluations,
    its best ``window``-episode training mean (drawn hollow).
    """
    plt = pyplot()
    figure, (train_axes, eval_axes) = plt.subplots(1, 2, figsize=(12, 4.5))
    scores: dict[str, list[tuple[float, bool]]] = {}
    for name, run_dirs in groups.items():
        episodes = [read_episodes(run_dir) for run_dir in run_dirs]
        for run_dir, (steps, _) in zip(run_dirs, episodes):
            if not len(steps):
                raise ValueError(f"{str(run_dir / 'episodes.csv')!r} holds no finished episode")
        grid = np.linspace(0, min(steps[-1] for steps, _ in episodes), 100)[1:]
        training = [(steps, trailing_means(returns, window)) for steps, returns in episodes]
        _plot_band(train_axes, grid, *mean_curve(training, grid), f"{name} (n={len(run_dirs)})")
        evaluations = [read_evaluations(run_dir) for run_dir in run_dirs]
        evaluated = [(steps, means) for steps, means in evaluations if len(steps)]
        if evaluated:
            grid = np.unique(np.concatenate([steps for steps, _ in evaluated]))
            grid = grid[grid <= min(steps[-1] for steps, _ in evaluated)]
            _plot_band(eval_axes, grid, *mean_curve(evaluated, grid), f"{name} (n={len(evaluated)} of {len(run_dirs)})")
        scores[name] = [(float(means.max()), True) if len(means) else (best_window_mean(returns, window), False)
                        for (_, means), (_, returns) in zip(evaluations, episodes)]
    train_axes.set(title="training", xlabel="environment steps", ylabel=f"mean return of the last {window} episodes")
    eval_axes.set(title="greedy evaluation", xlabel="environment steps", ylabel="mean evaluation return")
    if not eval_axes.lines:
        eval_axes.text(0.5, 0.5, "no run has evaluations.csv\n(train with --eval-every)", ha="center", va="center",
                       transform=eval_axes.transAxes)
    for axes in (train_axes, eval_axes):
        axes.grid(alpha=0.3)
        if axes.lines:
            axes.legend()
    figure.tight_layout()
    out_prefix.parent.mkdir(parents=True, exist_ok=True)
    curves_path = out_prefix.parent / f"{out_prefix.name}-curves.png"
    figure.savefig(curves_path, dpi=120)
    plt.close(figure)

    figure = _best_scores_figure(plt, scores, window)
    best_path = out_prefix.parent / f"{out_prefix.name}-best.png"
    figure.savefig(best_path, dpi=120)
    plt.close(figure)
    return curves_path, best_path


def _best_scores_figure(plt: Any, scores: dict[str, list[tuple[float, bool]]], window: int) -> Any:
    """``plot_runs``' second figure: a violin per group of its runs' best scores ``(score, from evaluations)``."""
    figure, axes = plt.subplots(figsize=(max(4.0, 1.6 * len(scores) + 2), 4.5))
    positions = np.arange(1, len(scores) + 1)
    axes.violinplot([[score for score, _ in runs] for runs in scores.values()], positions, showmeans=True)
    for position, runs in zip(positions, scores.values()):
        for score, evaluated in runs:
            axes.scatter(position, score, edgecolors="black", facecolors="black" if evaluated else "none", zorder=3)
    evaluated_runs = [evaluated for runs in scores.values() for _, evaluated in runs]
    if all(evaluated_runs):
        axes.set_ylabel("best greedy evaluation mean return")
    elif not any(evaluated_runs):
        axes.set_ylabel(f"best {window}-episode training mean return (no evaluations)")
    else:
        axes.set_ylabel(f"best greedy evaluation mean return\n(hollow: no evaluations, best {window}-episode training mean)")
    axes.set_xticks(positions, list(scores))
    axes.set_title("best score of each run")
    axes.grid(alpha=0.3, axis="y")
    figure.tight_layout()
    return figure


def _plot_band(axes, grid: np.ndarray, mean: np.ndarray, half: np.ndarray, label: str) -> None:
    """A mean curve with its 95% band (no band for a single run: its half-width is NaN)."""
    (line,) = axes.plot(grid, mean, label=label)
    axes.fill_between(grid, mean - half, mean + half, color=line.get_color(), alpha=0.25)
