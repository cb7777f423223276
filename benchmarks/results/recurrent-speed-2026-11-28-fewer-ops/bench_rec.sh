#!/bin/bash
# Recurrent speed, alone, one thread, one run after the other: HEAD (the reset schedule shared and applied with one
# gather, log_softmax, MLP layers as functions, gc.freeze) against eeba147 (the code of the last measurement), with
# sb3-contrib 2.9.2 beside each. Needs the bench extra.
# Usage, from the repository root: bash benchmarks/results/recurrent-speed-2026-11-28-fewer-ops/bench_rec.sh RUNS_DIR
set -e
runs=${1:?RUNS_DIR}
rm -rf /tmp/wt_before; git worktree add -q /tmp/wt_before eeba147
echo "== CartPole without velocities, 50k steps: HEAD $(git rev-parse --short HEAD)"
python benchmarks/bench_recurrent.py --steps 50000 --out "$runs/cartpole-now" --eval-episodes 5
echo "== CartPole without velocities, 50k steps: eeba147"
(cd /tmp/wt_before && python benchmarks/bench_recurrent.py --steps 50000 --out "$runs/cartpole-before" --eval-episodes 5)
echo "== CartPole without velocities, 50k steps: HEAD again"
python benchmarks/bench_recurrent.py --steps 50000 --out "$runs/cartpole-now-2" --eval-episodes 5
echo "== MiniGrid-MemoryS7, sequences of 128, 100k steps, seed 0: HEAD $(git rev-parse --short HEAD)"
python benchmarks/bench_recurrent_memory.py --out "$runs/memory-now" --arms voidrl-lstm-128 sb3contrib --steps 100000 --seeds 0 --eval-episodes 10
echo "== the same voidrl arm at eeba147"
(cd /tmp/wt_before && python benchmarks/bench_recurrent_memory.py --out "$runs/memory-before" --arms voidrl-lstm-128 --steps 100000 --seeds 0 --eval-episodes 10)
git worktree remove --force /tmp/wt_before
