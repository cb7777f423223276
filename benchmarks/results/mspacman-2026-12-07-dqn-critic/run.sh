#!/bin/bash
# Issue 88 part 4: the `pretrain` preset with its critic on the 2013 DQN body instead of the Nature CNN and whole
# minibatches instead of chunks of 64 (the policy's update unchanged), to 491,520 reward-free steps on tuning seeds,
# against the preset's four seeds at that step (mspacman-2026-12-01-fewer-contrastive-1m): is the coverage and the
# particle reward within their spread? One torch thread each, two at a time, --keep-weights, then 30 sampled and 30
# greedy games of the last networks on the first pre-training's starts (explore --seed 0). Usage, from the repository
# root, with the venv's python on PATH: run.sh SEED RUN_DIR (add --resume to continue).
set -e
seed=${1:?SEED}; run=${2:?RUN_DIR}; shift 2
here=${OUT:-benchmarks/results/mspacman-2026-12-07-dqn-critic}/seed$seed
python -m voidrl pretrain ppg --env ALE/MsPacman-v5 --steps 491520 --seed "$seed" --critic-network dqn2013 \
    --chunk-size none --torch-threads 1 --keep-weights --no-progress --run-dir "$run" "$@"
benchmarks/play_pretraining.sh "$run" "$here" last
