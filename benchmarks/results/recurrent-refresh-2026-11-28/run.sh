#!/bin/bash
# Experiment for issue 50's "align sequences to episode starts if it helps learning": its upper bound. Alignment would
# change only which stored starting state a sequence unrolls from (episode starts inside a sequence are already exact);
# recomputing every sequence's starting state with the current parameters removes all of that staleness. Recurrent PPO,
# cartpole-memory preset, CartPole without velocities, 200k steps, greedy evaluation over 20 episodes at the end,
# seeds 0-14 (every-epoch: 0-9), one thread each:
#   stored          the code at da2954b (seeds 0-2: recurrent-speed-2026-11-28-fewer-ops/learning, the same code)
#   every-minibatch refresh.patch applied, VOIDRL_REFRESH_STATES=1: states recomputed before every minibatch
#   every-epoch     refresh.patch applied, VOIDRL_REFRESH_STATES=epoch: before each epoch's first minibatch
# Usage: run.sh RUNS_DIR (from the repository root, the bench venv active); then table.sh rebuilds the tables from
# this folder alone.
set -e
runs=${1:?RUNS_DIR}
here=$(dirname "$0")
rm -rf /tmp/wt_refresh; git worktree add -q /tmp/wt_refresh da2954b
(cd /tmp/wt_refresh && git apply "$OLDPWD/$here/refresh.patch")
train() { python -m voidrl train ppo --env voidrl/CartPoleNoVelocity-v1 --preset cartpole-memory --steps 200000 --seed "$1" \
            --eval-every 200000 --eval-episodes 20 --torch-threads 1 --no-progress --run-dir "$2"; }
for seed in 3 4 5 6 7 8 9 10 11 12 13 14; do (cd /tmp/wt_refresh && train $seed "$runs/stored/seed$seed"); done
for seed in 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14; do
  (cd /tmp/wt_refresh && VOIDRL_REFRESH_STATES=1 train $seed "$runs/every-minibatch/seed$seed")
done
for seed in 0 1 2 3 4 5 6 7 8 9; do
  (cd /tmp/wt_refresh && VOIDRL_REFRESH_STATES=epoch train $seed "$runs/every-epoch/seed$seed")
done
git worktree remove --force /tmp/wt_refresh
