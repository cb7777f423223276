"""The pixel path's speed table from the committed runs' metrics.csv (one folder per run, named SETUP-REPEAT; time.txt
holds /usr/bin/time's wall, user and system seconds of the whole command).

    python benchmarks/pixel_speed_table.py benchmarks/results/pixel-path-2026-11-26
"""

from __future__ import annotations

import argparse
import csv
import statistics
from pathlib import Path


def run_figures(run_dir: Path) -> dict[str, float]:
    """Steps/s over collection and updates (each update's steps over its time/sps) and, per 2,048 environment steps,
    the mean env, acting and update seconds; the command's wall and CPU seconds."""
    rows = list(csv.DictReader((run_dir / "metrics.csv").open()))
    steps = [int(float(row["step"])) for row in rows]
    seconds = sum((now - before) / float(row["time/sps"]) for before, now, row in zip([0, *steps], steps, rows))
    per_2048 = {name: statistics.mean(float(row[f"time/{name}_seconds"]) * 2048 / (now - before)
                                      for before, now, row in zip([0, *steps], steps, rows))
                for name in ("env", "inference", "update")}
    wall, user, system = map(float, (run_dir / "time.txt").read_text().split())
    return {"sps": steps[-1] / seconds, "wall": wall, "cpu": user + system, **per_2048}


def table(folder: Path) -> str:
    groups: dict[str, list[dict[str, float]]] = {}
    for run_dir in sorted(path for path in folder.iterdir() if (path / "metrics.csv").exists()):
        groups.setdefault(run_dir.name.rsplit("-", 1)[0], []).append(run_figures(run_dir))
    lines = ["| set-up | steps/s (runs) | mean | wall s | CPU s | env s | acting s | update s |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, runs in groups.items():
        mean = {key: statistics.mean(run[key] for run in runs) for key in runs[0]}
        speeds = ", ".join(f"{run['sps']:.0f}" for run in runs)
        lines.append(f"| {name} | {speeds} | {mean['sps']:.0f} | {mean['wall']:.0f} | {mean['cpu']:.0f} | {mean['env']:.1f} | "
                     f"{mean['inference']:.1f} | {mean['update']:.1f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    print(table(parser.parse_args().folder))


if __name__ == "__main__":
    main()
