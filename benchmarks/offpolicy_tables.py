"""Rebuild the tables of RESULTS.md's "R2D2's minatar preset" and "Agent57 on 2 Ray actors" sections from the
committed episodes (benchmarks/results/offpolicy-2026-11-25/*/episodes.csv.gz).

    python benchmarks/offpolicy_tables.py
"""

from __future__ import annotations

from pathlib import Path

from voidrl.io.report import read_episodes

RESULTS = Path(__file__).resolve().parent / "results" / "offpolicy-2026-11-25"


def main() -> None:
    steps, returns = read_episodes(RESULTS / "spi32-t250")
    means = [returns[steps <= budget][-100:].mean() for budget in (50_000, 100_000, 200_000)]
    print("R2D2 Breakout, spi 32, target every 250: last 100 training returns at 50k / 100k / 200k:",
          " / ".join(f"{mean:.2f}" for mean in means))
    print("\n| run | " + " | ".join(f"{lo // 1000}-{lo // 1000 + 50}k" for lo in range(0, 300_000, 50_000)) + " | all |")
    for name in ("agent57-actors0", "agent57-actors2x8", "agent57-actors2"):
        steps, returns = read_episodes(RESULTS / name)
        cells = []
        for lo in range(0, 300_000, 50_000):
            window = (steps >= lo) & (steps < lo + 50_000)
            cells.append(f"{int((returns[window] > 0).sum())}/{int(window.sum())}")
        goals = int((returns > 0).sum())
        print(f"| {name} | " + " | ".join(cells) + f" | {goals}/{len(returns)} ({100 * goals / len(returns):.1f}%) |")


if __name__ == "__main__":
    main()
