#!/bin/bash
# Issue 50 on a lent machine's CPU (no GPU used): recurrent PPO's speed on CartPole without velocities against
# sb3-contrib 2.9.2, one torch thread, each run alone, HEAD against 27bdd7a (carried in .before/), three passes.
# Ran from the checkout's root there (one call, 478 s), with .whlbench/ (this script, COMMIT, and the Python 3.12 wheels:
#   pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp --platform manylinux_2_28_x86_64 \
#     -d .whlbench gymnasium==1.4.0 farama-notifications stable-baselines3==2.9.2 sb3-contrib==2.9.2 cloudpickle rich \
#     markdown-it-py mdurl pygments tqdm)
# and .before/ (git archive 27bdd7a voidrl benchmarks/bench_recurrent.py pyproject.toml) carried; bench.log is its
# printout. Only the first 8 files under $OUT came back (the call's limit), so the tables live in bench.log alone.
set -u
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whlbench/*.whl || exit 1
export PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=""
{ cat .whlbench/COMMIT; lscpu | grep -E "Model name|^CPU\(s\)"; uptime
  PYTHONPATH=/tmp/site:$PWD python3 -c "import torch, numpy, gymnasium, stable_baselines3, sb3_contrib; print('torch', torch.__version__, 'numpy', numpy.__version__, 'gymnasium', gymnasium.__version__, 'sb3-contrib', sb3_contrib.__version__)"; } 2>&1 | tee $OUT/machine.log
keep() { mkdir -p $OUT/$2; cp $1/results.json $OUT/$2/; for run in $1/voidrl-*; do mkdir -p $OUT/$2/${run##*/}; cp $run/config.json $OUT/$2/${run##*/}/; gzip -c $run/episodes.csv > $OUT/$2/${run##*/}/episodes.csv.gz; gzip -c $run/metrics.csv > $OUT/$2/${run##*/}/metrics.csv.gz; done; }
for pass in 1 2 3; do
  echo "== pass $pass: HEAD $(cat .whlbench/COMMIT)"
  PYTHONPATH=/tmp/site:$PWD timeout 140 python3 benchmarks/bench_recurrent.py --steps 50000 --out /tmp/b/now-$pass --eval-episodes 5 && keep /tmp/b/now-$pass cartpole-now-$pass
  echo "== pass $pass: 27bdd7a"
  (cd .before && PYTHONPATH=/tmp/site:$PWD timeout 140 python3 benchmarks/bench_recurrent.py --steps 50000 --out /tmp/b/before-$pass --eval-episodes 5) && keep /tmp/b/before-$pass cartpole-before-$pass
done 2>&1 | tee $OUT/bench.log
