#!/bin/bash
# Recurrent speed, alone, one thread: voidrl now (HEAD, padded pieces), voidrl with packed pieces (2a7f5b5), sb3-contrib 2.9.2.
cd /work/main
rm -rf /tmp/wt_before; git worktree add -q /tmp/wt_before 2a7f5b5
echo "== MiniGrid-MemoryS7, sequences of 128, 100k steps, seed 0: HEAD $(git rev-parse --short HEAD)"
.venv/bin/python benchmarks/bench_recurrent_memory.py --out /work/runs/recmem2-now --arms voidrl-lstm-128 sb3contrib --steps 100000 --seeds 0 --eval-episodes 10
echo "== the same voidrl arm at 2a7f5b5 (packed pieces)"
(cd /tmp/wt_before && /work/main/.venv/bin/python benchmarks/bench_recurrent_memory.py --out /work/runs/recmem2-before --arms voidrl-lstm-128 --steps 100000 --seeds 0 --eval-episodes 10)
echo "== CartPole without velocities, 50k steps: HEAD"
.venv/bin/python benchmarks/bench_recurrent.py --steps 50000 --out /work/runs/reccp2-now --eval-episodes 5
echo "== CartPole without velocities, 50k steps: 2a7f5b5"
(cd /tmp/wt_before && /work/main/.venv/bin/python benchmarks/bench_recurrent.py --steps 50000 --out /work/runs/reccp2-before --eval-episodes 5)
git worktree remove --force /tmp/wt_before
