#!/bin/bash
# Issue 48, coverage: the 1M-step pre-training of mspacman-2026-11-27 with the particle returns running across lives
# (--intrinsic-gamma 0.99: PPG's critic gets a non-episodic value head for the particle reward; the auxiliary head
# distils those returns), and 30 sampled games of its networks at 163,840 and 327,680 steps (voidrl explore, seed 0,
# the same games' starts as the committed random.csv). Stopped at 352,256 steps: it scored and covered less than the
# episodic run at both points. Usage, from the repository root: run.sh RUN_DIR (add --resume to continue a run).
set -e
run=${1:?RUN_DIR}; shift
voidrl pretrain ppg --env ALE/MsPacman-v5 --steps 1000000 --seed 0 --intrinsic-gamma 0.99 --torch-threads 2 --run-dir "$run" "$@"
# networks along the way: voidrl export --checkpoint "$run/checkpoint.pt" --format weights --out "$run/step-N.pt" at
# each checkpoint (every 20 updates, 81,920 steps), then for N in 163840 327680:
#   voidrl explore --checkpoint "$run/step-N.pt" --episodes 30 --out explore/step-N.csv
