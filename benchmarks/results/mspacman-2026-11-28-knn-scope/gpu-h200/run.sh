#!/bin/bash
# Issue 48, part 3, on a lent NVIDIA H200 (2026-11-28, code at 9505e19; the test's smaller run at the next commit).
# The machine has torch but no gymnasium or ale-py: their Python 3.12 wheels travelled in .whl/ (ignored by git),
# downloaded here with
#   pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#     --platform manylinux_2_28_x86_64 -d .whl gymnasium==1.4.0 ale-py==0.12.1 farama-notifications
# and this script ran from the checkout's root there, with $OUT the folder that came back (two calls).
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc
  python3 -c "import torch, gymnasium, ale_py; print('torch', torch.__version__, 'gymnasium', gymnasium.__version__, 'ale_py', ale_py.__version__, 'cuda', torch.cuda.is_available())"; } 2>&1 | tee $OUT/machine.log
# call 1: the same pre-training twice at once, with and without deterministic kernels (determinism.log) ...
python3 benchmarks/bench_device.py --device cuda --out /tmp/bench --parts determinism --repeat pretrain --repeat-steps 16384 2>&1 | tee $OUT/determinism.log
# ... and the pretrain preset alone, 98,304 steps, then 30 sampled games of its final networks (bench.log, pretrain/)
python3 benchmarks/bench_device.py --device cuda --out /tmp/bench --parts pretrain --presets pretrain 2>&1 | tee $OUT/bench.log
mkdir -p $OUT/pretrain
for f in episodes metrics; do gzip -c /tmp/bench/runs/pretrain/$f.csv > $OUT/pretrain/$f.csv.gz; done
cp /tmp/bench/runs/pretrain/config.json $OUT/pretrain/; cp /tmp/bench/explore-pretrain.csv $OUT/pretrain/explore.csv
# call 2: the GPU's tests (tests.log)
python3 -m pytest -q -p no:cacheprovider -p no:xdist -o addopts="" -rs --durations=5 tests/test_reproducibility.py \
  tests/test_collector.py -k "cuda or kernels or gpu" 2>&1 | tee $OUT/tests.log
