#!/bin/bash
# Issues 65 (part 3) and 63: the `pretrain` preset with 2 contrastive updates a rollout of 16 x 256 instead of 32
# (--contrastive-updates-per-step 0.0078125, at which APT + PPG ran 0.92x plain PPG's steps/s) on the preset's whole
# budget, 1M reward-free steps, on the four seeds the preset itself ran (0 and 1 new; 2 and 3 continued with --resume
# from mspacman-2026-11-30-fewer-contrastive's 491,520-step runs). Does the policy explore as the preset's does, seed
# for seed? One torch thread each, two at a time, --keep-weights (a checkpoint every 81,920 steps), then 30 sampled
# games of the networks at each checkpoint and 30 greedy of the last, on the first pre-training's starts
# (explore --seed 0). The weights stay in RUN_DIR/weights. Usage, from the repository root, with the venv's python on
# PATH: run.sh SEED RUN_DIR (add --resume to continue). OUT: another results folder; PLAY=last: the last networks' games
# alone.
set -e
seed=${1:?SEED}; run=${2:?RUN_DIR}; shift 2
here=${OUT:-benchmarks/results/mspacman-2026-12-01-fewer-contrastive-1m}/seed$seed
python -m voidrl pretrain ppg --env ALE/MsPacman-v5 --steps 1000000 --seed "$seed" --knn-scope environment \
    --contrastive-updates-per-step 0.0078125 --torch-threads 1 --keep-weights --no-progress --run-dir "$run" "$@"
benchmarks/play_pretraining.sh "$run" "$here" ${PLAY:-}
