#!/bin/bash
# Issue 48, coverage: the 1M-step pre-training of mspacman-2026-11-27 with each particle's neighbours sought within its
# own game (--knn-scope environment: among its environment's particles of the rollout, not the whole rollout's), and
# 30 sampled games of its networks at 163,840 and 327,680 steps (voidrl explore, seed 0, the same games' starts as the
# committed random.csv). Stopped at 339,968 steps by the end of a session, resumed with --resume to 1M the next
# session; its final networks are pretrain/pretrained-weights.pt.
# Usage, from the repository root: run.sh RUN_DIR (add --resume to continue a run).
set -e
run=${1:?RUN_DIR}; shift
voidrl pretrain ppg --env ALE/MsPacman-v5 --steps 1000000 --seed 0 --knn-scope environment --torch-threads 2 --run-dir "$run" "$@"
# networks along the way: voidrl export --checkpoint "$run/checkpoint.pt" --format weights --out "$run/step-N.pt" at
# each checkpoint (every 20 updates, 81,920 steps), then for each N (two at a time, OMP_NUM_THREADS=1 each):
#   voidrl explore --checkpoint "$run/step-N.pt" --episodes 30 --out explore/step-N.csv
# and at the last, 1003520, also with --greedy (explore/step-1003520-greedy.csv).
