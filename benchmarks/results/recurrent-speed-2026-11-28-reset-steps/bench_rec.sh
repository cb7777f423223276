#!/bin/bash
# Recurrent speed, alone, one thread, one run after the other: voidrl with reset steps and lstm_cell acting (HEAD),
# voidrl with the pieces padded to the longest (0c7a0cb), sb3-contrib 2.9.2 beside each. Needs the bench extra.
# Usage, from the repository root: bash benchmarks/results/recurrent-speed-2026-11-28-reset-steps/bench_rec.sh RUNS_DIR
set -e
runs=${1:?RUNS_DIR}
root=$(pwd)
rm -rf /tmp/wt_before; git worktree add -q /tmp/wt_before 0c7a0cb
echo "== MiniGrid-MemoryS7, sequences of 128, 100k steps, seed 0: HEAD $(git rev-parse --short HEAD)"
python benchmarks/bench_recurrent_memory.py --out "$runs/memory-now" --arms voidrl-lstm-128 sb3contrib --steps 100000 --seeds 0 --eval-episodes 10
echo "== the same voidrl arm at 0c7a0cb (pieces padded to the longest)"
(cd /tmp/wt_before && python benchmarks/bench_recurrent_memory.py --out "$runs/memory-before" --arms voidrl-lstm-128 --steps 100000 --seeds 0 --eval-episodes 10)
echo "== CartPole without velocities, 50k steps: HEAD"
python benchmarks/bench_recurrent.py --steps 50000 --out "$runs/cartpole-now" --eval-episodes 5
echo "== CartPole without velocities, 50k steps: 0c7a0cb"
(cd /tmp/wt_before && python benchmarks/bench_recurrent.py --steps 50000 --out "$runs/cartpole-before" --eval-episodes 5)
git worktree remove --force /tmp/wt_before
