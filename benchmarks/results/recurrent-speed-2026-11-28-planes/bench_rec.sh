#!/bin/bash
# Recurrent speed against sb3-contrib 2.9.2 (issue 50), alone, one thread, after MiniGridPlanes' single index assignment
# (e5bc66b): CartPole without velocities twice, then MiniGrid-MemoryS7 (sequences of 128, 100k steps) for seeds 0-2
# with both arms, then seed 0's two arms again. The code measured is the commit named in bench.log's header; the
# MemoryS7 runs of the same seed at d6ec1c4 (before e5bc66b) wrote the same episodes.
# The session's first measurement, at d6ec1c4 (before e5bc66b), is in ../recurrent-speed-2026-11-28-start.
# Usage, from the repository root: bash benchmarks/results/recurrent-speed-2026-11-28-planes/bench_rec.sh RUNS_DIR
set -e
PASSES=2 bash benchmarks/results/recurrent-speed-2026-11-28-wall/bench_rec.sh "${1:?RUNS_DIR}"
