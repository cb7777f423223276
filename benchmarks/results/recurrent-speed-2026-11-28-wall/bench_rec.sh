#!/bin/bash
# Recurrent speed against sb3-contrib 2.9.2 (issue 50), alone, one thread, voidrl timed by its training loop's wall time
# (time/elapsed_seconds: logging and checkpoints included, 9a09160) with the cheaper TensorBoard writes (5ca079a) and
# MiniGridPlanes' single index assignment (e5bc66b): CartPole without velocities three times, then MiniGrid-MemoryS7
# (sequences of 128, 100k steps) for seeds 0-2 with both arms, then seed 0's two arms again. PASSES sets the CartPole
# passes (3 by default); the planes and sampler measurements run this script too.
# Usage, from the repository root: bash benchmarks/results/recurrent-speed-2026-11-28-wall/bench_rec.sh RUNS_DIR
set -e
runs=${1:?RUNS_DIR}
passes=${PASSES:-3}
echo "== commit $(git rev-parse --short HEAD), $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores"
for pass in $(seq "$passes"); do
  echo "== CartPole without velocities, 50k steps, pass $pass"
  python benchmarks/bench_recurrent.py --steps 50000 --out "$runs/cartpole-$pass" --eval-episodes 5
done
echo "== MiniGrid-MemoryS7, sequences of 128, 100k steps, seeds 0-2"
python benchmarks/bench_recurrent_memory.py --out "$runs/memory" --arms voidrl-lstm-128 sb3contrib --steps 100000 --seeds 0 1 2 --eval-episodes 10
echo "== MiniGrid-MemoryS7, seed 0 again"
python benchmarks/bench_recurrent_memory.py --out "$runs/memory-again" --arms voidrl-lstm-128 sb3contrib --steps 100000 --seeds 0 --eval-episodes 10
