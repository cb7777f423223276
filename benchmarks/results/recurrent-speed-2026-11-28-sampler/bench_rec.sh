#!/bin/bash
# Issue 50's speed, alone, one thread, after the categorical sampler without per-call checks (a727a51), with the changes
# of the session before it (MiniGridPlanes e5bc66b, TensorBoard 5ca079a, wall-time timing 9a09160): feed-forward
# speed against the session's start (bench_commits.py, d6ec1c4), CartPole without velocities three times, then
# MiniGrid-MemoryS7 (sequences of 128, 100k steps) for seeds 0-2 with both arms, then seed 0's two arms again.
# (bench.log shows the header line first; run this way it comes after the bench_commits table.)
# Usage, from the repository root: bash benchmarks/results/recurrent-speed-2026-11-28-sampler/bench_rec.sh RUNS_DIR
set -e
runs=${1:?RUNS_DIR}
echo "== feed-forward against d6ec1c4"
python benchmarks/bench_commits.py --base d6ec1c4 --scenarios ppo-cartpole ppo-minatar --repeats 3
bash benchmarks/results/recurrent-speed-2026-11-28-wall/bench_rec.sh "$runs"
