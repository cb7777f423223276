#!/bin/bash
# Learning check of the fewer-ops code (d84e3f5): recurrent PPO, cartpole-memory preset, CartPole without velocities,
# 3 seeds x 200k steps, greedy evaluation over 20 episodes at the end, one after the other beside other work; then the
# table against recurrent-inputs-2026-11-28's "without" arm (001b4be, the same command).
# Usage: run.sh RUNS_DIR (from the repository root).
set -e
runs=${1:?RUNS_DIR}
for seed in 0 1 2; do
  python -m voidrl train ppo --env voidrl/CartPoleNoVelocity-v1 --preset cartpole-memory --steps 200000 --seed $seed \
    --eval-every 200000 --eval-episodes 20 --torch-threads 1 --no-progress --run-dir "$runs/seed$seed"
done
B=benchmarks/results/recurrent-inputs-2026-11-28/without
python -m voidrl plot $B/seed0 $B/seed1 $B/seed2 "$runs"/seed* --label before='*recurrent-inputs*' --label now="$runs/*" \
  --table 200000 --out "$runs/table"
