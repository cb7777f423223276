#!/bin/bash
# Issues 65 (part 3) and 63: the `pretrain` preset with 2 contrastive updates a rollout of 16 x 256 instead of 32
# (--contrastive-updates-per-step 0.0078125), at which APT + PPG runs 0.92x plain PPG's steps/s
# (speed-2026-11-30/pretrain-overhead-0.0078125.md). Does the policy still explore? Seeds 2 and 3, the two of the preset's
# four seeds that lingered on the way (mspacman-2026-11-30-pretrain-seeds), to 491,520 steps (past seed 3's lingering at
# 492k), one torch thread each, two at a time, --keep-weights (a checkpoint every 81,920 steps), then 30 sampled games
# of the networks at each checkpoint and 30 greedy of the last, on the first pre-training's starts (explore --seed 0).
# The weights stay in RUN_DIR/weights. Usage, from the repository root, with the venv's python on PATH:
# run.sh SEED RUN_DIR (add --resume to continue).
set -e
seed=${1:?SEED}; run=${2:?RUN_DIR}; shift 2
here=benchmarks/results/mspacman-2026-11-30-fewer-contrastive/seed$seed
python -m voidrl pretrain ppg --env ALE/MsPacman-v5 --steps 491520 --seed "$seed" --knn-scope environment \
    --contrastive-updates-per-step 0.0078125 --torch-threads 1 --keep-weights --no-progress --run-dir "$run" "$@"
benchmarks/play_pretraining.sh "$run" "$here"
