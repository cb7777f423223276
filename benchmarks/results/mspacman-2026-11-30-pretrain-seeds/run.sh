#!/bin/bash
# Issue 63, part 5 (is it luck?): more pre-trainings of the `pretrain` preset on Ms. Pac-Man, 1M reward-free steps
# each, to say how often the preset explores: the command of mspacman-2026-11-30-pretrain-seed1/run.sh with another
# --seed, two torch threads, alone, and --keep-weights so that the networks at every checkpoint (every 81,920 steps)
# are kept. Then, beside this script in seedN/: the log, the final weights' zero-shot games on the first pre-training's
# starts (voidrl explore --seed 0: 30 games sampled and greedy, as every other pre-training's), and 30 sampled games
# of the networks at each checkpoint, to see when the seed's coverage of the maze parts from seed 0's
# (mspacman-2026-11-28-knn-scope/explore/step-N.csv). The weights stay in RUN_DIR/weights: no more weights in git.
# Usage, from the repository root, with the venv's python on PATH: run.sh SEED RUN_DIR (add --resume to continue).
set -e
seed=${1:?SEED}; run=${2:?RUN_DIR}; shift 2
here=benchmarks/results/mspacman-2026-11-30-pretrain-seeds/seed$seed
python -m voidrl pretrain ppg --env ALE/MsPacman-v5 --steps 1000000 --seed "$seed" --knn-scope environment --torch-threads 2 --keep-weights --run-dir "$run" "$@"
benchmarks/play_pretraining.sh "$run" "$here"
