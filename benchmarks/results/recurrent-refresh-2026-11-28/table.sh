#!/bin/bash
# The tables of this folder from its committed files: training returns (voidrl plot --table, each refresh arm against
# the stored states) and the greedy evaluations. Usage: table.sh (from the repository root).
set -e
here=$(dirname "$0")
stored="benchmarks/results/recurrent-speed-2026-11-28-fewer-ops/learning/seed0 benchmarks/results/recurrent-speed-2026-11-28-fewer-ops/learning/seed1 benchmarks/results/recurrent-speed-2026-11-28-fewer-ops/learning/seed2 $here/stored/seed*"
for arm in every-minibatch every-epoch; do
  echo "## stored against $arm: training returns (sampled actions)"
  python -m voidrl plot $stored $here/$arm/seed* --label stored='*stored*' --label stored='*fewer-ops*' --label $arm="*$arm*" \
    --table 200000 --out "$here/$arm" | grep '^|'
  echo
done
python - "$here" <<'PY'
import csv, gzip, math, statistics, sys
from pathlib import Path
here = Path(sys.argv[1])
stored = [Path(f"benchmarks/results/recurrent-speed-2026-11-28-fewer-ops/learning/seed{k}") for k in range(3)]
by_seed = lambda runs: sorted(runs, key=lambda run: int(run.name.removeprefix("seed")))
arms = {"stored": by_seed(stored + list((here / "stored").glob("seed*"))),
        "every-minibatch": by_seed((here / "every-minibatch").glob("seed*")), "every-epoch": by_seed((here / "every-epoch").glob("seed*"))}
print("## Greedy evaluation at 200k steps (20 episodes per seed; mean over seeds +- standard error)\n")
print("| arm | seeds | mean | seeds at 500 | seeds >= 475 | per seed, in seed order | update time / acting time |")
print("|---|---:|---:|---:|---:|---|---:|")
measured = {}
for arm, runs in arms.items():
    greedy = measured[arm] = [float(list(csv.DictReader((run / "evaluations.csv").open()))[-1]["return_mean"]) for run in runs]
    ratios = []
    for run in runs:
        rows = list(csv.DictReader(gzip.open(run / "metrics.csv.gz", "rt")))
        ratios.append(sum(float(r["time/update_seconds"]) for r in rows) /
                      sum(float(r["time/env_seconds"]) + float(r["time/inference_seconds"]) for r in rows))
    sem = statistics.stdev(greedy) / math.sqrt(len(greedy))
    print(f"| {arm} | {len(greedy)} | {statistics.mean(greedy):.1f} +- {sem:.1f} | {sum(g >= 500 for g in greedy)} | "
          f"{sum(g >= 475 for g in greedy)} | {', '.join(f'{g:.0f}' for g in greedy)} | {statistics.median(ratios):.2f} |")
from scipy.stats import ttest_ind
print()
for arm in ("every-minibatch", "every-epoch"):
    test = ttest_ind(measured[arm], measured["stored"], equal_var=False)
    print(f"{arm} against stored, greedy: Welch's t {test.statistic:.2f}, two-sided p {test.pvalue:.3f}")
PY
