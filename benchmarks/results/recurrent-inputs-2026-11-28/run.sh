#!/bin/bash
# Recurrent PPO on CartPole without velocities, with and without the previous action and reward as inputs
# (--previous-action-reward), 3 seeds x 200k steps each, greedy evaluation over 20 episodes at the end; then the table.
# Usage: run.sh RUNS_DIR (from the repository root); the committed folder holds the episodes, evaluations and table.
set -e
runs=${1:?RUNS_DIR}
for seed in 0 1 2; do
  for arm in without with; do
    extra=(); [ "$arm" = with ] && extra=(--previous-action-reward)
    python -m voidrl train ppo --env voidrl/CartPoleNoVelocity-v1 --preset cartpole-memory "${extra[@]}" --steps 200000 \
      --seed $seed --eval-every 200000 --eval-episodes 20 --torch-threads 1 --no-progress --run-dir "$runs/$arm/seed$seed"
  done
done
python -m voidrl plot "$runs"/with/seed* "$runs"/without/seed* --label with='*/with/*' --label without='*/without/*' \
  --table 200000 --out "$runs/previous-action-reward"
