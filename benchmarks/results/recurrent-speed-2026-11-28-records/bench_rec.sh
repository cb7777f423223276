#!/bin/bash
# Recurrent speed, alone, one thread, one run after the other: HEAD (it ran at 3255c2b: acting's records stacked once
# per rollout, the done mask computed once per step, fewer calls in the CartPole wrappers and in GAE; reverted at the
# next commits, so check 3255c2b out to repeat it) against 27bdd7a (the code of the last measurement, abbc01d's plus
# no-ops on the CPU), alternating, with sb3-contrib 2.9.2 beside each. Needs the bench extra. bench.log is its printout,
# then a second MemoryS7 pass (27bdd7a first) and, with the records reverted, MemoryS7 and CartPole once more
# (memory-now-3, cartpole-now-4), run by hand with the same commands.
# Usage, from the repository root: bash benchmarks/results/recurrent-speed-2026-11-28-records/bench_rec.sh RUNS_DIR
set -e
runs=${1:?RUNS_DIR}
rm -rf /tmp/wt_before; git worktree add -q /tmp/wt_before 27bdd7a
for pass in 1 2 3; do
  echo "== CartPole without velocities, 50k steps, pass $pass: HEAD $(git rev-parse --short HEAD)"
  python benchmarks/bench_recurrent.py --steps 50000 --out "$runs/cartpole-now-$pass" --eval-episodes 5
  if [ $pass -lt 3 ]; then
    echo "== CartPole without velocities, 50k steps, pass $pass: 27bdd7a"
    (cd /tmp/wt_before && python benchmarks/bench_recurrent.py --steps 50000 --out "$runs/cartpole-before-$pass" --eval-episodes 5)
  fi
done
echo "== MiniGrid-MemoryS7, sequences of 128, 100k steps, seed 0: HEAD $(git rev-parse --short HEAD)"
python benchmarks/bench_recurrent_memory.py --out "$runs/memory-now" --arms voidrl-lstm-128 sb3contrib --steps 100000 --seeds 0 --eval-episodes 10
echo "== the same voidrl arm at 27bdd7a"
(cd /tmp/wt_before && python benchmarks/bench_recurrent_memory.py --out "$runs/memory-before" --arms voidrl-lstm-128 --steps 100000 --seeds 0 --eval-episodes 10)
git worktree remove --force /tmp/wt_before
