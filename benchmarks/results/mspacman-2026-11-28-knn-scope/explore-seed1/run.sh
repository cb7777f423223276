#!/bin/bash
# Issue 48: 30 more whole games (seed 1, other starts than explore/'s seed 0) of the uniform-random policy, the committed
# 1M knn-scope weights (sampled and greedy) and the 2026-11-27 rollout-scope 1M weights (git history), two at a time with
# OMP_NUM_THREADS=1 each (code at 3231320). Table: python benchmarks/mspacman_tables.py THIS_FOLDER --explore-seed 1
# Usage, from the repository root: run.sh
set -e
out=benchmarks/results/mspacman-2026-11-28-knn-scope/explore-seed1/explore
weights=benchmarks/results/mspacman-2026-11-28-knn-scope/pretrain/pretrained-weights.pt
git show f2e1f36:benchmarks/results/mspacman-2026-11-27/pretrain/pretrained-weights.pt > /tmp/rollout-scope-1m.pt
explore() { OMP_NUM_THREADS=1 voidrl explore --seed 1 --episodes 30 "$@"; }
explore --random ALE/MsPacman-v5 --out $out/random.csv & explore --checkpoint $weights --out $out/step-1003520.csv & wait
explore --checkpoint $weights --greedy --out $out/step-1003520-greedy.csv &
explore --checkpoint /tmp/rollout-scope-1m.pt --out $out/rollout-scope-step-1003520.csv & wait
