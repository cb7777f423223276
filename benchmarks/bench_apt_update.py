"""Seconds per APT contrastive update on Atari-sized frames: the pre-training default against the thesis's set-up.

Both plug-ins are built in one process from the ``pretrain`` and ``thesis-pretrain`` presets, their
buffers filled with the same random 4x84x84 uint8 frames, and their updates timed alternately, so a
busy machine slows both alike. The contrastive update is ~90% of APT pre-training's time on Ms. Pac-Man.

    python benchmarks/bench_apt_update.py --threads 2 --repeats 6
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from voidrl.algos.ppg import PRESETS
from voidrl.intrinsic.apt import APTConfig, APTReward


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=4)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    frames = torch.randint(0, 256, (640, 4, 84, 84), dtype=torch.uint8, generator=torch.Generator().manual_seed(0))
    plugins = {}
    for preset in ("pretrain", "thesis-pretrain"):
        torch.manual_seed(0)
        plugins[preset] = APTReward(APTConfig(**PRESETS[preset]["intrinsic_config"]), tuple(frames.shape[1:]))
        for chunk in frames.split(16):
            plugins[preset].buffer.add(chunk)
    seconds: dict[str, list[float]] = {preset: [] for preset in plugins}
    for repeat in range(args.repeats):
        order = list(plugins) if repeat % 2 == 0 else list(plugins)[::-1]
        for preset in order:
            started = time.perf_counter()
            plugins[preset].contrastive_update()
            seconds[preset].append(time.perf_counter() - started)
    print(f"{args.threads} torch thread(s), batch {plugins['pretrain'].config.contrastive_batch_size}, {args.repeats} updates each\n")
    print("| preset | seconds per update (median) | range |\n|---|---:|---|")
    for preset, times in seconds.items():
        print(f"| {preset} | {statistics.median(times):.2f} | {min(times):.2f}-{max(times):.2f} |")


if __name__ == "__main__":
    main()
