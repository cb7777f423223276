#!/bin/bash
# Issue 50's speed, alone, one thread, after the categorical sampler without per-call checks (a727a51), with the changes
# of the session before it (MiniGridPlanes e5bc66b, TensorBoard 5ca079a, wall-time timing 9a09160): feed-forward
# speed against the session's start (bench_commits.py, d6ec1c4), CartPole without velocities three times, then
# MiniGrid-MemoryS7 (sequences of 128, 100k steps) for seeds 0-2 with both arms, then seed 0's two arms again.
# Usage, from the repository root: bash benchmarks/results/recurrent-speed-2026-11-28-sampler/bench_rec.sh RUNS_DIR
set -e
runs=${1:?RUNS_DIR}
echo "== commit $(git rev-parse --short HEAD), $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores"
echo "== feed-forward against d6ec1c4"
python benchmarks/bench_commits.py --base d6ec1c4 --scenarios ppo-cartpole ppo-minatar --repeats 3
for pass in 1 2 3; do
  echo "== CartPole without velocities, 50k steps, pass $pass"
  python benchmarks/bench_recurrent.py --steps 50000 --out "$runs/cartpole-$pass" --eval-episodes 5
done
echo "== MiniGrid-MemoryS7, sequences of 128, 100k steps, seeds 0-2"
python benchmarks/bench_recurrent_memory.py --out "$runs/memory" --arms voidrl-lstm-128 sb3contrib --steps 100000 --seeds 0 1 2 --eval-episodes 10
echo "== MiniGrid-MemoryS7, seed 0 again"
python benchmarks/bench_recurrent_memory.py --out "$runs/memory-again" --arms voidrl-lstm-128 sb3contrib --steps 100000 --seeds 0 --eval-episodes 10
