#!/bin/bash
# Seeds 0 and 1 of ../mspacman-2026-12-01-fewer-contrastive-1m/run.sh again (2 contrastive updates a rollout, 1M
# reward-free steps), on a 2-core Intel Xeon at 178c90f, for the fine-tuning arms fewer-contrastive-seed{0,1}-*: the
# first runs' weights (on an AMD EPYC) went with their run folders. Same seed, same command, another CPU: its
# floating-point paths part the trajectory from the first runs' in the first update (seed 0's policy loss at step 4096:
# -0.00205423 here, -0.00207468 there), so these are two more pre-trainings of the same setting, not the same two.
# The last networks' games alone. Usage, from the repository root, with the venv's python on PATH:
# run.sh SEED RUN_DIR (add --resume to continue).
OUT=benchmarks/results/mspacman-2026-12-01-fewer-contrastive-1m-intel PLAY=last \
    exec benchmarks/results/mspacman-2026-12-01-fewer-contrastive-1m/run.sh "$@"
