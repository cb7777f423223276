#!/usr/bin/env python
"""One protocol for every benchmark table (issue 87): a manifest runs its arms, one command tables them.

A manifest (``benchmarks/manifests/NAME.toml``) names the arms, each a ``voidrl`` command and its seeds, the budget
the measures are read at, the measures, and the comparisons to print::

    description = "what the table supports"
    seeds = "report"                 # report: every seed 100 or above; tuning: every seed 0-9
    budget = 100000                  # steps: every measure counts the training games ended by then
    measures = ["final", "auc"]      # final, auc, at_10%, at_25%, evaluation (protocol.measures_of)
    [arms.pretrain]                  # a parent arm: its runs are the units of the arms that start from them
    command = ["pretrain", "ppg", "--env", "ALE/MsPacman-v5", "--steps", "1000000"]
    seeds = [100, 101, 102]
    tabled = false
    [arms.finetuned]
    command = ["finetune", "ppg", "--from", "{parent}/checkpoint.pt", "--env", "ALE/MsPacman-v5", "--steps", "100000"]
    parent = "pretrain"              # seeds below run from each of the parent's runs
    seeds = [100, 101, 102]
    [arms.scratch]
    command = ["train", "ppg", "--env", "ALE/MsPacman-v5", "--steps", "100000"]
    seeds = [100, 101, 102, 103, 104]
    [[comparisons]]
    arms = ["finetuned", "scratch"]

``run`` trains every run not yet finished (``--resume``, ``--parallel`` at a time, one torch thread each, parents
first), writes each run's ``provenance.json`` (the commit, whether the tree had changes, the CPU, torch) when it
starts, and copies its config, provenance and gzipped logs to ``benchmarks/results/NAME/ARM/seedS`` (a child:
``seedP-S``, P its parent's seed). ``table`` reads only those committed files and:

- refuses arms from different commits (or a run resumed across commits) unless ``--allow-mixed-commits``, and then
  says which commit each arm ran at;
- prints an interval only where an arm has at least 3 independent units (seeds, or parents where runs share one),
  and otherwise the values themselves;
- bootstraps on two levels where runs share a parent (parents, then seeds within each), and labels every interval
  with its method.

    python benchmarks/protocol.py run benchmarks/manifests/NAME.toml --run-root /work/runs
    python benchmarks/protocol.py table benchmarks/manifests/NAME.toml
    python benchmarks/protocol.py page        # docs/results.md: every headline manifest's table
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from pool import cpu_model, gzip_copy, run_commands  # noqa: E402
from voidrl.io.report import read_evaluations, run_measures  # noqa: E402
from voidrl.math.intervals import MIN_INTERVAL_UNITS, two_level_difference, two_level_interval, verdict  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
MANIFESTS = ROOT / "benchmarks" / "manifests"
PAGE = ROOT / "docs" / "results.md"
PAGE_MANIFESTS = [MANIFESTS / "mspacman-finetune-100k.toml", MANIFESTS / "mspacman-finetune-500k.toml",
                  MANIFESTS / "minatar-breakout-250k.toml", MANIFESTS / "cartpole-rl-zoo-100k.toml"]
"""The manifests the results page shows, each a headline claim re-earned on report seeds."""
SEED_KINDS = {"tuning": range(0, 10), "report": range(100, 1 << 31)}
"""Where choices are made (tuning) and where claims are made (report)."""
COPIED = ("config.json", "provenance.json")
GZIPPED = ("episodes.csv", "metrics.csv", "evaluations.csv")
"""A run's files that a results folder keeps (evaluations.csv where the run evaluated)."""


@dataclass
class Arm:
    name: str
    command: list[str]
    seeds: list[int]
    parent: str | None = None
    tabled: bool = True


@dataclass
class Manifest:
    name: str
    description: str
    seed_kind: str
    budget: int
    measures: list[str]
    arms: dict[str, Arm]
    comparisons: list[tuple[str, str]] = field(default_factory=list)

    @classmethod
    def read(cls, path: Path) -> Manifest:
        data = tomllib.loads(path.read_text())
        arms = {name: Arm(name, list(arm["command"]), [int(seed) for seed in arm["seeds"]], arm.get("parent"), arm.get("tabled", True))
                for name, arm in data["arms"].items()}
        manifest = cls(path.stem, data.get("description", ""), data.get("seeds", "report"), int(data["budget"]),
                       list(data.get("measures", ["final", "auc"])), arms,
                       [tuple(comparison["arms"]) for comparison in data.get("comparisons", [])])
        manifest.validate()
        return manifest

    def validate(self) -> None:
        if self.seed_kind not in SEED_KINDS:
            raise SystemExit(f"{self.name}: seeds must be one of {', '.join(SEED_KINDS)}, got {self.seed_kind!r}")
        allowed = SEED_KINDS[self.seed_kind]
        for arm in self.arms.values():
            if outside := [seed for seed in arm.seeds if seed not in allowed]:
                raise SystemExit(f"{self.name}: arm {arm.name}'s seeds {outside} are not {self.seed_kind} seeds "
                                 f"({allowed.start}-{allowed.stop - 1 if allowed.stop < 1 << 30 else 'up'})")
            if arm.parent is not None and arm.parent not in self.arms:
                raise SystemExit(f"{self.name}: arm {arm.name}'s parent {arm.parent!r} is not an arm ({', '.join(self.arms)})")
        for pair in self.comparisons:
            if unknown := [name for name in pair if name not in self.arms]:
                raise SystemExit(f"{self.name}: comparison {pair} names unknown arms {unknown} ({', '.join(self.arms)})")

    def runs(self, arm: Arm) -> list[tuple[str, int | None, int]]:
        """(folder name, parent seed or None, seed) of every run of ``arm``."""
        if arm.parent is None:
            return [(f"seed{seed}", None, seed) for seed in arm.seeds]
        return [(f"seed{parent}-{seed}", parent, seed) for parent in self.arms[arm.parent].seeds for seed in arm.seeds]


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()


def provenance() -> dict[str, str | bool]:
    import torch

    return {"commit": git("rev-parse", "--short", "HEAD"), "changes": bool(git("status", "--porcelain", "voidrl")),
            "cpu": cpu_model(), "torch": torch.__version__, "python": platform.python_version()}


def record_start(run_dir: Path) -> None:
    """``provenance.json`` in ``run_dir``: this process's commit and machine, added to a list where the run resumes."""
    path = run_dir / "provenance.json"
    starts = json.loads(path.read_text())["starts"] if path.exists() else []
    run_dir.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"starts": [*starts, provenance()]}, indent=2) + "\n")


def command_line(arm: Arm, parent_dir: Path | None, seed: int, run_dir: Path, threads: int) -> list[str]:
    words = [word.replace("{parent}", str(parent_dir)) for word in arm.command]
    return [sys.executable, "-m", "voidrl", *words, "--seed", str(seed), "--run-dir", str(run_dir), "--resume",
            "--torch-threads", str(threads), "--no-progress"]


def finished(run_dir: Path) -> bool:
    """Whether ``run_dir`` holds a run that reached its steps (then it is not started again, nor its start recorded)."""
    config, metrics = run_dir / "config.json", run_dir / "metrics.csv"
    if not (config.exists() and metrics.exists() and (run_dir / "checkpoint.pt").exists()):
        return False
    last = metrics.read_text().splitlines()[-1].split(",")[0]
    return last.isdigit() and int(last) >= json.loads(config.read_text())["run"]["steps"]


def run(manifest: Manifest, run_root: Path, parallel: int, threads: int, arms: list[str] | None, results: Path = RESULTS) -> None:
    chosen = [arm for arm in manifest.arms.values() if arms is None or arm.name in arms]
    generations = [[arm for arm in chosen if arm.parent is None], [arm for arm in chosen if arm.parent is not None]]
    for generation in generations:
        commands, every_run = [], []
        for arm in generation:
            for folder, parent, seed in manifest.runs(arm):
                run_dir = run_root / manifest.name / arm.name / folder
                parent_dir = None if parent is None else run_root / manifest.name / arm.parent / f"seed{parent}"
                if not finished(run_dir):
                    record_start(run_dir)
                    commands.append(command_line(arm, parent_dir, seed, run_dir, threads))
                every_run.append((arm, folder, run_dir))
        run_commands(commands, parallel, cwd=ROOT)
        for arm, folder, run_dir in every_run:
            copy_results(run_dir, results / manifest.name / arm.name / folder)


def copy_results(run_dir: Path, target: Path) -> None:
    target.mkdir(parents=True, exist_ok=True)
    for name in COPIED:
        (target / name).write_bytes((run_dir / name).read_bytes())
    for name in GZIPPED:
        if (run_dir / name).exists():
            gzip_copy(run_dir / name, target / f"{name}.gz")


@dataclass
class ArmResults:
    """An arm's committed runs: per unit (a parent's seed, or the run's own seed) the measures of its runs."""

    arm: Arm
    units: dict[int, list[dict[str, float]]]
    commits: set[str]
    cpus: set[str]


def read_arm(manifest: Manifest, arm: Arm, results: Path) -> ArmResults:
    units: dict[int, list[dict[str, float]]] = {}
    commits, cpus = set(), set()
    for folder, parent, seed in manifest.runs(arm):
        run_dir = results / manifest.name / arm.name / folder
        if not (run_dir / "episodes.csv.gz").exists():
            raise SystemExit(f"{manifest.name}: {arm.name}/{folder} has no committed results ({run_dir}); run the manifest first")
        starts = json.loads((run_dir / "provenance.json").read_text())["starts"]
        commits |= {start["commit"] + (" + changes" if start["changes"] else "") for start in starts}
        cpus |= {start["cpu"] for start in starts}
        units.setdefault(seed if parent is None else parent, []).append(measures_of(run_dir, manifest.budget))
    return ArmResults(arm, units, commits, cpus)


def measures_of(run_dir: Path, budget: int) -> dict[str, float]:
    """``run_measures`` (final, auc, at_10%, at_25%) within the budget, and ``evaluation``: the mean return of the
    run's last evaluation games, greedy (``--eval-every``: its final policy's, the run ending on the rollout that
    crosses the budget; NaN without any)."""
    _, means = read_evaluations(run_dir)
    return run_measures(run_dir, budget) | {"evaluation": float(means[-1]) if len(means) else math.nan}


def method_label(units: int, per_unit: int) -> str:
    if units < MIN_INTERVAL_UNITS:
        return f"values of {units} unit{'s' * (units != 1)}: no interval below {MIN_INTERVAL_UNITS}"
    if per_unit > 1:
        return f"IQM, 95% two-level percentile bootstrap ({units} parents, then their runs)"
    return f"IQM, 95% percentile bootstrap ({units} seeds)"


def groups_of(results: ArmResults, measure: str) -> list[np.ndarray]:
    return [np.array([runs[measure] for runs in unit]) for unit in results.units.values()]


def cell(results: ArmResults, measure: str) -> str:
    groups = groups_of(results, measure)
    if len(groups) < MIN_INTERVAL_UNITS:
        return "values " + ", ".join(f"{value:.1f}" for group in groups for value in group)
    interval = two_level_interval(groups)
    return f"{interval.estimate:.1f} [{interval.low:.1f}, {interval.high:.1f}]"


def table(manifest: Manifest, results: Path = RESULTS, allow_mixed_commits: bool = False) -> str:
    arms = {name: read_arm(manifest, arm, results) for name, arm in manifest.arms.items() if arm.tabled}
    commits = set().union(*(arm.commits for arm in arms.values()))
    if len(commits) > 1 and not allow_mixed_commits:
        where = "; ".join(f"{name}: {', '.join(sorted(arm.commits))}" for name, arm in arms.items())
        raise SystemExit(f"{manifest.name}: its arms ran at different commits ({where}); pass --allow-mixed-commits to table them anyway")
    lines = [f"## {manifest.name}", "", manifest.description, "",
             f"{manifest.seed_kind.capitalize()} seeds; measures at {manifest.budget:,} steps; "
             f"commit {', '.join(sorted(commits))}; CPU {'; '.join(sorted(set().union(*(arm.cpus for arm in arms.values()))))}.", ""]
    if len(commits) > 1:
        lines += ["**Mixed commits**: " + "; ".join(f"{name} at {', '.join(sorted(arm.commits))}" for name, arm in arms.items()), ""]
    lines += ["| arm | seeds | " + " | ".join(manifest.measures) + " | method |", "|---|---|" + "---:|" * len(manifest.measures) + "---|"]
    for name, arm in arms.items():
        per_unit = max(len(unit) for unit in arm.units.values())
        seeds = ", ".join(map(str, arm.arm.seeds)) + (f" from each {arm.arm.parent} ({', '.join(map(str, arm.units))})" if arm.arm.parent else "")
        lines.append(f"| {name} | {seeds} | " + " | ".join(cell(arm, measure) for measure in manifest.measures) +
                     f" | {method_label(len(arm.units), per_unit)} |")
    for a, b in manifest.comparisons:
        lines += ["", f"{a} - {b}:", ""]
        for measure in manifest.measures:
            difference = two_level_difference(groups_of(arms[a], measure), groups_of(arms[b], measure))
            shown = f"{difference.estimate:.1f}" if math.isnan(difference.low) else \
                f"{difference.estimate:.1f} [{difference.low:.1f}, {difference.high:.1f}]"
            units = min(len(arms[a].units), len(arms[b].units))
            per_unit = max(len(unit) for name in (a, b) for unit in arms[name].units.values())
            lines.append(f"- {measure}: {shown}, {verdict(difference)} (difference of IQMs; {method_label(units, per_unit)})")
    return "\n".join(lines)


PAGE_HEADER = """# Current results

Each table below is generated from its manifest in `benchmarks/manifests/` and the committed runs in
`benchmarks/results/` by `python benchmarks/protocol.py page`, and `tests/test_docs.py` checks that it still is. Every
arm of a table ran at the commit it names; report seeds (100 and up) are seeds no choice was made on. A difference is
"helped" or "hurt" only where its whole interval is on one side of 0. The dated journal of every experiment,
with the ones that failed, is `benchmarks/RESULTS.md`.
"""


def page(manifests: list[Manifest], results: Path = RESULTS) -> str:
    """The results page: ``PAGE_HEADER`` and the table of every manifest, in the order given."""
    return "\n\n".join([PAGE_HEADER.rstrip("\n"), *(table(manifest, results) for manifest in manifests)]) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["run", "table", "page"])
    parser.add_argument("manifest", type=Path, nargs="?", help="run, table: the manifest")
    parser.add_argument("--page-manifests", type=Path, nargs="+", default=PAGE_MANIFESTS, help="page: the manifests it shows")
    parser.add_argument("--out", type=Path, default=PAGE, help="page: where it is written")
    parser.add_argument("--run-root", type=Path, default=ROOT / "runs" / "protocol", help="where runs train (outside git)")
    parser.add_argument("--parallel", type=int, default=2)
    parser.add_argument("--torch-threads", type=int, default=1)
    parser.add_argument("--arms", nargs="+", help="run these arms only")
    parser.add_argument("--allow-mixed-commits", action="store_true")
    args = parser.parse_args()
    if args.action == "page":
        args.out.write_text(page([Manifest.read(path) for path in args.page_manifests]))
        print(f"wrote {args.out}")
        return
    if args.manifest is None:
        parser.error(f"{args.action} needs a manifest")
    manifest = Manifest.read(args.manifest)
    if args.action == "run":
        run(manifest, args.run_root, args.parallel, args.torch_threads, args.arms)
    print(table(manifest, allow_mixed_commits=args.allow_mixed_commits))


if __name__ == "__main__":
    main()
