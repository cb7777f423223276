#!/bin/bash
# After a pre-training with --keep-weights: its config, log and games into a results folder (mspacman_tables.py's
# layout), and voidrl explore --seed 0's games on the first pre-training's starts: 30 greedy of the last networks,
# 30 sampled of the networks at every checkpoint. The weights stay in RUN_DIR/weights.
# Usage, from the repository root, with the venv's python on PATH: play_pretraining.sh RUN_DIR RESULTS_FOLDER [last]
# ("last": the last networks' games alone, sampled and greedy; the run again without it adds the other checkpoints').
set -e
run=${1:?RUN_DIR}; here=${2:?RESULTS_FOLDER}; only=${3:-}
mkdir -p "$here/pretrain" "$here/explore"
git rev-parse --short HEAD > "$here/pretrain/COMMIT"
cp "$run/config.json" "$here/pretrain/"
gzip -n -c "$run/episodes.csv" > "$here/pretrain/episodes.csv.gz"
gzip -n -c "$run/metrics.csv" > "$here/pretrain/metrics.csv.gz"
cp benchmarks/results/mspacman-2026-11-28-knn-scope/explore/random.csv "$here/explore/"
final=$(ls "$run/weights" | sort -t- -k2 -n | tail -1)
OMP_NUM_THREADS=1 python -m voidrl explore --checkpoint "$run/weights/$final" --episodes 30 --seed 0 --greedy --out "$here/explore/${final%.pt}-greedy.csv" &
for weights in $( [ "$only" = last ] && echo "$final" || ls "$run/weights" | sort -t- -k2 -n); do
  OMP_NUM_THREADS=1 python -m voidrl explore --checkpoint "$run/weights/$weights" --episodes 30 --seed 0 --out "$here/explore/${weights%.pt}.csv"
done
wait
