#!/bin/bash
# Issue 63, part 5 (is it luck?): a second pre-training of the `pretrain` preset on Ms. Pac-Man, seed 1, 1M reward-free
# steps: the command of mspacman-2026-11-28-knn-scope/run.sh (seed 0, whose settings `pretrain` now holds) with
# --seed 1, two torch threads, alone; then its log and final networks (as weights) beside this script, and the
# weights' zero-shot games on the first pre-training's starts (voidrl explore, seed 0: 30 games sampled and greedy, as
# the first's in mspacman-2026-11-29-finetune-ablation, and 100 of each).
# Usage, from the repository root: run.sh RUN_DIR (add --resume to continue a run).
set -e
run=${1:?RUN_DIR}; shift
here=benchmarks/results/mspacman-2026-11-30-pretrain-seed1
voidrl pretrain ppg --env ALE/MsPacman-v5 --steps 1000000 --seed 1 --knn-scope environment --torch-threads 2 --run-dir "$run" "$@"
mkdir -p "$here/pretrain" "$here/explore"
git rev-parse --short HEAD > "$here/pretrain/COMMIT"
cp "$run/config.json" "$here/pretrain/"
gzip -n -c "$run/episodes.csv" > "$here/pretrain/episodes.csv.gz"
gzip -n -c "$run/metrics.csv" > "$here/pretrain/metrics.csv.gz"
voidrl export --checkpoint "$run/checkpoint.pt" --format weights --out "$here/pretrain/pretrained-weights.pt"
for games in 30 100; do
  suffix=$([ "$games" = 30 ] || echo "-$games-games")
  OMP_NUM_THREADS=1 voidrl explore --checkpoint "$here/pretrain/pretrained-weights.pt" --episodes "$games" --seed 0 --out "$here/explore/step-1003520$suffix.csv" &
  OMP_NUM_THREADS=1 voidrl explore --checkpoint "$here/pretrain/pretrained-weights.pt" --episodes "$games" --seed 0 --greedy --out "$here/explore/step-1003520$suffix-greedy.csv"
  wait
done
