"""Seconds per APT contrastive update on Atari-sized frames: the pre-training default against the thesis's set-up.

Both plug-ins are built in one process from the ``pretrain`` and ``pretrain-nt-xent`` presets, their
buffers filled with the same random 4x84x84 uint8 frames, and their updates timed alternately, so a
busy machine slows both alike. The contrastive update is ~90% of APT pre-training's time on Ms. Pac-Man.
``--thesis-chunks`` adds the thesis set-up at other contrastive chunk sizes (``none``: both views at once).

    python benchmarks/bench_apt_update.py --threads 2 --repeats 6
    python benchmarks/bench_apt_update.py --threads 2 --repeats 8 --thesis-chunks none 128
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from voidrl.configs.ppg import PRESETS
from voidrl.intrinsic.apt import APTConfig, APTReward


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=4)
    parser.add_argument("--thesis-chunks", nargs="*", default=[], metavar="C",
                        help="also time pretrain-nt-xent with contrastive_chunk_size C (a number, or none)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    frames = torch.randint(0, 256, (640, 4, 84, 84), dtype=torch.uint8, generator=torch.Generator().manual_seed(0))
    settings = {preset: PRESETS[preset]["intrinsic_config"] for preset in ("pretrain", "pretrain-nt-xent")}
    for chunk_size in args.thesis_chunks:
        size = None if chunk_size == "none" else int(chunk_size)
        settings[f"pretrain-nt-xent, contrastive chunk {chunk_size}"] = {**settings["pretrain-nt-xent"], "contrastive_chunk_size": size}
    plugins = {}
    for name, intrinsic_config in settings.items():
        torch.manual_seed(0)
        plugins[name] = APTReward(APTConfig(**intrinsic_config), tuple(frames.shape[1:]))
        for chunk in frames.split(16):
            plugins[name].buffer.add(chunk)
    seconds: dict[str, list[float]] = {name: [] for name in plugins}
    for repeat in range(args.repeats):
        order = list(plugins) if repeat % 2 == 0 else list(plugins)[::-1]
        for name in order:
            started = time.perf_counter()
            plugins[name].contrastive_update()
            seconds[name].append(time.perf_counter() - started)
    print(f"{args.threads} torch thread(s), batch {plugins['pretrain'].config.contrastive_batch_size}, {args.repeats} updates each\n")
    print("| setting | seconds per update (median) | range |\n|---|---:|---|")
    for name, times in seconds.items():
        print(f"| {name} | {statistics.median(times):.2f} | {min(times):.2f}-{max(times):.2f} |")


if __name__ == "__main__":
    main()
