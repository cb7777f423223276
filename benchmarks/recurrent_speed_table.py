"""Issue 50's speed table from committed runs: voidrl's recurrent PPO against sb3-contrib's RecurrentPPO, pass by pass.

Each folder holds the passes of one measurement (``bench_rec.sh`` there): ``cartpole*/results.json`` written by
``bench_recurrent.py`` and ``memory*/<arm>-s<seed>/result.json`` written by ``bench_recurrent_memory.py``. A pass's
ratio is voidrl's steps/s over sb3-contrib's in that pass (the two arms ran one after the other); each folder's last
row gives its ratios' mean and range.

    python benchmarks/recurrent_speed_table.py benchmarks/results/recurrent-speed-2026-11-28-start \\
        benchmarks/results/recurrent-speed-2026-11-28-planes benchmarks/results/recurrent-speed-2026-11-28-wall
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path


def cartpole_passes(folder: Path) -> list[tuple[str, float, float]]:
    """(pass, voidrl lstm steps/s, sb3-contrib steps/s) of every CartPole pass in ``folder``."""
    passes = []
    for path in sorted(folder.glob("**/results.json")):
        results = json.loads(path.read_text())
        passes.append((str(path.parent.relative_to(folder)), results["voidrl lstm"]["steps_per_second"],
                       results["sb3-contrib RecurrentPPO"]["steps_per_second"]))
    return passes


def memory_passes(folder: Path) -> list[tuple[str, float, float]]:
    """(pass and seed, voidrl lstm-128 steps/s, sb3-contrib steps/s) of every MiniGrid-MemoryS7 pair in ``folder``."""
    passes = []
    for path in sorted(folder.glob("**/voidrl-lstm-128-s*/result.json")):
        partner = path.parent.parent / path.parent.name.replace("voidrl-lstm-128", "sb3contrib") / "result.json"
        if partner.exists():
            speeds = [json.loads(p.read_text()) for p in (path, partner)]
            passes.append((f"{path.parent.parent.relative_to(folder)}, seed {path.parent.name.rsplit('-s', 1)[1]}",
                           *(run["steps"] / run["training_seconds"] for run in speeds)))
    return passes


def table(task: str, goal: float, rows: list[tuple[str, str, float, float]]) -> str:
    lines = [f"{task} (goal {goal:g}x)\n", "| folder | pass | voidrl steps/s | sb3-contrib steps/s | ratio |", "|---|---|---:|---:|---:|"]
    for folder in dict.fromkeys(row[0] for row in rows):
        ratios = []
        for _, name, ours, theirs in (row for row in rows if row[0] == folder):
            ratios.append(ours / theirs)
            lines.append(f"| {folder} | {name} | {ours:,.0f} | {theirs:,.0f} | {ratios[-1]:.2f}x |")
        lines.append(f"| {folder} | {len(ratios)} pass{'es' if len(ratios) > 1 else ''} | | | **mean {statistics.mean(ratios):.2f}x** ({min(ratios):.2f}-{max(ratios):.2f}) |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", type=Path, nargs="+", help="measurement folders under benchmarks/results/")
    args = parser.parse_args()
    for task, goal, read in (("CartPole without velocities, 50k steps", 5, cartpole_passes),
                             ("MiniGrid-MemoryS7, sequences of 128, 100k steps", 3, memory_passes)):
        rows = [(folder.name, *row) for folder in args.folders for row in read(folder)]
        print(table(task, goal, rows) + "\n")


if __name__ == "__main__":
    main()
