"""Run logs: ``episodes.csv``, ``metrics.csv``, TensorBoard events, optionally W&B.

On resume from a checkpoint taken at step S, rows with ``step > S`` (written
after that checkpoint, and about to be produced again) are dropped first, so the
files hold each episode and update once.
"""

from __future__ import annotations

import csv
import math
import sys
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from voidrl.io.video import Video, gif_bytes

EPISODE_COLUMNS = ["step", "return", "length"]
TENSORBOARD_VIDEO_SIDE = 256
"""Pixels a side, at most, of a video in TensorBoard: MuJoCo's 480 x 480 screens go as 240 x 240 (a 1,000-step
HalfCheetah episode is a GIF of about 10 MB even so), Atari's 210 x 160 as they are."""


def truncate_csv(path: Path, max_step: int, columns: list[str] | None = None) -> int:
    """Keep the header and the rows whose ``step`` is at most ``max_step``; drop damaged rows (a line a killed run left
    half-written: the wrong number of fields, or a step that is not a number) and return how many there were.

    The header must start with ``step`` and, with ``columns``, be exactly those; a damaged header is rewritten from
    ``columns``, or, without them, the file is dropped whole (its rows cannot be read without their names).
    """
    if not path.exists():
        return 0
    with path.open(newline="") as handle:
        rows = list(csv.reader(handle))
    if not rows:
        path.unlink()
        return 0
    header, body = rows[0], [row for row in rows[1:] if row]
    if header[:1] != ["step"] or (columns is not None and header != columns):
        if columns is None:
            path.unlink()
            return len(body) + 1
        header = columns
    kept, damaged = [header], 0
    for row in body:
        step = _parse_step(row[0]) if len(row) == len(header) else None
        if step is None:
            damaged += 1
        elif step <= max_step:
            kept.append(row)
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", newline="") as handle:
        csv.writer(handle).writerows(kept)
    tmp.replace(path)
    return damaged + (header is not rows[0])


def _parse_step(text: str) -> int | None:
    try:
        return int(float(text))
    except ValueError:
        return None


class RunLogger:
    def __init__(self, run_dir: str | Path, config: dict[str, Any], resume_step: int | None = None, wandb: bool = False):
        self.run_dir = Path(run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.episodes_path = self.run_dir / "episodes.csv"
        self.metrics_path = self.run_dir / "metrics.csv"
        if resume_step is not None:
            for path, columns in ((self.episodes_path, EPISODE_COLUMNS), (self.metrics_path, None)):
                damaged = truncate_csv(path, resume_step, columns)
                if damaged:
                    print(f"voidrl: {path}: dropped {damaged} damaged line(s) (written by a run stopped mid-line)"
                          + ("" if path.exists() else "; the file starts over"), file=sys.stderr)
        self.metric_columns: list[str] | None = None
        if self.metrics_path.exists() and self.metrics_path.stat().st_size:
            with self.metrics_path.open(newline="") as handle:
                self.metric_columns = next(csv.reader(handle))
        new_episodes = not self.episodes_path.exists()
        self.episodes_file = self.episodes_path.open("a", newline="")
        self.episodes_csv = csv.writer(self.episodes_file)
        if new_episodes:
            self.episodes_csv.writerow(EPISODE_COLUMNS)
        self.metrics_file = self.metrics_path.open("a", newline="")
        self.metrics_csv = csv.writer(self.metrics_file)

        from torch.utils.tensorboard import SummaryWriter

        # a queue of 1,000 events (10 by default) lets the writer thread take them in batches instead of one switch of
        # threads per event; they reach the disk at each update's flush
        self.tensorboard = SummaryWriter(
            str(self.run_dir / "tensorboard"), max_queue=1000, purge_step=None if resume_step is None else resume_step + 1
        )
        self.wandb = None
        if wandb:
            import wandb as wandb_module

            self.wandb = wandb_module.init(dir=str(self.run_dir), config=config, resume="allow")

    def log_episodes(self, steps: list[int], returns: list[float], lengths: list[int]) -> None:
        by_step: dict[int, list[tuple[str, float]]] = {}
        for step, episode_return, length in zip(steps, returns, lengths):
            self.episodes_csv.writerow([step, episode_return, length])
            by_step.setdefault(step, []).extend((("rollout/episode_return", episode_return), ("rollout/episode_length", length)))
        for step, scalars in by_step.items():
            self._tensorboard_scalars(scalars, step)
        if self.wandb is not None and returns:
            self.wandb.log({"rollout/episode_return": sum(returns) / len(returns)}, step=steps[-1])

    def log_metrics(self, step: int, metrics: dict[str, float]) -> None:
        if self.metric_columns is None:
            self.metric_columns = ["step", *metrics]
            self.metrics_csv.writerow(self.metric_columns)
        elif any(name not in self.metric_columns for name in metrics):
            self._add_metric_columns([name for name in metrics if name not in self.metric_columns])
        row = [step] + [_format(metrics.get(name)) for name in self.metric_columns[1:]]
        self.metrics_csv.writerow(row)
        self._tensorboard_scalars(metrics.items(), step)
        if self.wandb is not None:
            self.wandb.log(metrics, step=step)

    def log_video(self, tag: str, video: Video, step: int) -> None:
        """``video`` as an animated GIF in TensorBoard's Images tab, as ``SummaryWriter.add_video`` would write it
        (which needs moviepy.editor, gone from moviepy 2), every k-th pixel of its screens kept for the least k
        that brings their sides to ``TENSORBOARD_VIDEO_SIDE`` at most."""
        from tensorboard.compat.proto.summary_pb2 import Summary

        stride = -(-max(video.screens.shape[1:3]) // TENSORBOARD_VIDEO_SIDE)
        video = replace(video, screens=video.screens[:, ::stride, ::stride])
        _, height, width, channels = video.screens.shape
        image = Summary.Image(height=height, width=width, colorspace=channels, encoded_image_string=gif_bytes(video))
        self.tensorboard._get_file_writer().add_summary(Summary(value=[Summary.Value(tag=tag, image=image)]), step)

    def _tensorboard_scalars(self, scalars: Iterable[tuple[str, float]], step: int) -> None:
        """``(tag, value)`` pairs at ``step`` as one TensorBoard event: what ``add_scalar`` writes for each, in a
        fraction of its time (one summary, one event, one write instead of one each per scalar:
        benchmarks/bench_recurrent_parts.py)."""
        from tensorboard.compat.proto.summary_pb2 import Summary

        values = [Summary.Value(tag=tag, simple_value=float(value)) for tag, value in scalars]
        self.tensorboard._get_file_writer().add_summary(Summary(value=values), step)

    def _add_metric_columns(self, names: list[str]) -> None:
        """A metric seen for the first time (e.g. the first finished episode): widen the file, old rows blank."""
        self.metrics_file.close()
        with self.metrics_path.open(newline="") as handle:
            rows = list(csv.reader(handle))[1:]
        self.metric_columns = self.metric_columns + names
        tmp = self.metrics_path.with_suffix(".tmp")
        with tmp.open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(self.metric_columns)
            writer.writerows(row + [""] * len(names) for row in rows)
        tmp.replace(self.metrics_path)
        self.metrics_file = self.metrics_path.open("a", newline="")
        self.metrics_csv = csv.writer(self.metrics_file)

    def flush(self) -> None:
        self.episodes_file.flush()
        self.metrics_file.flush()
        self.tensorboard.flush()

    def close(self) -> None:
        self.flush()
        self.episodes_file.close()
        self.metrics_file.close()
        self.tensorboard.close()
        if self.wandb is not None:
            self.wandb.finish()


def _format(value: float | None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return f"{value:.6g}"
