#!/bin/bash
# The first recurrent speed measurement of the session, at d6ec1c4, alone, one thread (AMD EPYC, 2 cores); printout bench.log.
# Usage, from the repository root at d6ec1c4: bash benchmarks/results/recurrent-speed-2026-11-28-start/commands.sh RUNS_DIR
set -e
runs=${1:?RUNS_DIR}
python benchmarks/bench_recurrent.py --steps 50000 --out "$runs/cartpole" --eval-episodes 5
python benchmarks/bench_recurrent_memory.py --out "$runs/memory" --arms voidrl-lstm-128 sb3contrib --steps 100000 --seeds 0 --eval-episodes 10
