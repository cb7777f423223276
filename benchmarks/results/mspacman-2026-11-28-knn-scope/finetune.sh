#!/bin/bash
# Issue 48, part 2 from the knn-scope pre-training: fine-tune its committed weights on Ms. Pac-Man's score at BUDGET
# steps (atari preset, the same settings as mspacman-2026-11-27's arms), seeds SEEDS two at a time with one torch thread
# each; then each final agent's greedy evaluation (30 games, in the run) and 30 sampled games (voidrl explore), and the
# run's committable files copied to compare-<BUDGET/1000>k/<ARM>/seedK beside this script. ARM=scratch trains the
# same agent from scratch instead (voidrl train, same settings), for a scratch arm run at the same commit. OUT=FOLDER
# copies them into FOLDER/compare-<BUDGET/1000>k/<ARM>/seedK instead (a new results folder; the weights stay these).
# Usage, from the root of a checkout (python -m voidrl runs its code; a worktree keeps the runs apart from edits):
#   [ARM=scratch] finetune.sh RUNS_DIR BUDGET SEED...
set -e
runs=${1:?RUNS_DIR}; budget=${2:?BUDGET}; shift 2
here=benchmarks/results/mspacman-2026-11-28-knn-scope
weights=$here/pretrain/pretrained-weights.pt
arm=${ARM:-pretrained}
case $arm in
  pretrained) start=(finetune ppg --from "$weights") ;;
  scratch) start=(train ppg) ;;
  *) echo "ARM must be pretrained or scratch, not '$arm'" >&2; exit 2 ;;
esac
one() {
  local seed=$1 run=$runs/seed$1 out=${OUT:-$here}/compare-$((budget / 1000))k/$arm/seed$1
  python -m voidrl "${start[@]}" --env ALE/MsPacman-v5 --preset atari --steps "$budget" --seed "$seed" \
    --eval-every "$budget" --eval-episodes 30 --torch-threads 1 --no-progress --run-dir "$run"
  OMP_NUM_THREADS=1 python -m voidrl explore --checkpoint "$run/checkpoint.pt" --episodes 30 --out "$run/explore.csv"
  mkdir -p "$out"
  git rev-parse --short HEAD > "$out/COMMIT"
  cp "$run/config.json" "$run/evaluations.csv" "$run/explore.csv" "$out/"
  gzip -c "$run/episodes.csv" > "$out/episodes.csv.gz"
  gzip -c "$run/metrics.csv" > "$out/metrics.csv.gz"
}
while [ $# -gt 0 ]; do
  one "$1" & first=$!
  if [ $# -gt 1 ]; then one "$2" & second=$!; wait $second; fi
  wait $first
  shift $(( $# > 1 ? 2 : 1 ))
done
