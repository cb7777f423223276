#!/usr/bin/env bash
# The speed figures of 2026-11-30 (issue 65), alone on a 2-core machine, from the repository root:
#   benchmarks/results/speed-2026-11-30/run.sh
set -euo pipefail
D=benchmarks/results/speed-2026-11-30
python benchmarks/bench_ppo.py --scenario cartpole --compile --threads 1 --repeats 2 --out $D/cartpole-compile-1t.md
# The first update's cost: each arm with an empty inductor cache, the SB3 defaults as a preset file.
for arm in compile eager; do
    cache=$(mktemp -d) run=$(mktemp -d)/run
    flag=$([ $arm = compile ] && echo --compile || echo --no-compile)
    TORCHINDUCTOR_CACHE_DIR=$cache python -m voidrl train ppo --env CartPole-v1 --preset-file $D/sb3-defaults.json \
        --steps 81920 --seed 0 --torch-threads 1 --no-progress $flag --run-dir $run
    mkdir -p $D/first-update-$arm
    cp $run/config.json $D/first-update-$arm/
    gzip -c $run/metrics.csv > $D/first-update-$arm/metrics.csv.gz
done
# APT + PPG against plain PPG (issue 65, part 3): the pretrain preset's 32 contrastive updates a rollout, then 4 and 2.
for updates in "" 0.015625 0.0078125; do
    python benchmarks/bench_pretrain_overhead.py --repeats 2 --steps 12288 --threads 1 \
        ${updates:+--contrastive-updates-per-step $updates} > $D/pretrain-overhead${updates:+-$updates}.md
done
