"""What happens after each update besides learning: each a small hook the loop calls in turn.

The order is the loop's: the collapse guard judges the update, evaluation adds its scores, the
logs take every metric, the checkpoint records the state (and whether it was healthy), the
user's callbacks see the metrics, the progress bar (or, where none can be drawn, a line a minute) shows the step.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from tqdm import tqdm

from voidrl.callbacks import Callback
from voidrl.config import TrainConfig
from voidrl.configs.run import RunConfig
from voidrl.io.logger import RunLogger
from voidrl.io.video import Video
from voidrl.rollout.collector import RolloutStats
from voidrl.training.agent import Agent
from voidrl.training.evaluation import PeriodicEvaluator

ENTROPY_METRIC = "train/entropy"
"""The metric the collapse guard watches (every algorithm's entropy bonus logs it)."""


@dataclass
class UpdateReport:
    """One update as the hooks see it; a hook may add metrics for the ones after it."""

    step: int
    """Environment steps after the update."""
    update: int
    """Updates so far, this one included."""
    metrics: dict[str, float]
    stats: RolloutStats
    final: bool
    """The step budget is spent."""
    recent_episodes: int = 0
    """Episodes in ``rollout/recent_return_mean`` (the last 20 at most)."""
    healthy: bool = True
    """False while the collapse guard finds the policy entropy below its threshold."""
    videos: dict[str, Video] = field(default_factory=dict)
    """Episodes to show in TensorBoard, by tag."""


class Hook(Protocol):
    def after_update(self, report: UpdateReport) -> None: ...


class CollapseGuard:
    """Warn (and with ``collapse_restore`` reload the last healthy learning state) when the policy
    entropy stays below ``collapse_entropy`` for ``collapse_patience`` updates; the step goes on."""

    def __init__(self, run: RunConfig, restore: Callable[[], bool]):
        self.threshold, self.patience, self.restores = run.collapse_entropy, run.collapse_patience, run.collapse_restore
        self.restore = restore
        self.write: Callable[[str], None] = print
        """Where the warning goes (the loop routes it above its progress bar)."""
        self.low_entropy_updates = 0

    def after_update(self, report: UpdateReport) -> None:
        report.healthy = report.metrics.get(ENTROPY_METRIC, float("inf")) >= self.threshold
        self.low_entropy_updates = 0 if report.healthy else self.low_entropy_updates + 1
        if self.low_entropy_updates == self.patience:
            restored = self.restores and self.restore()
            report.metrics["rollout/collapse_restored"] = float(restored)
            self.write(f"voidrl: warning: policy entropy below {self.threshold} for {self.low_entropy_updates} "
                       f"updates at step {report.step} (policy collapse?)"
                       + ("; restored the last healthy checkpoint" if restored else ""))
            self.low_entropy_updates = 0

    def state_dict(self) -> dict[str, Any]:
        return {"low_entropy_updates": self.low_entropy_updates}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.low_entropy_updates = int(state["low_entropy_updates"])


class EvaluationHook:
    """Greedy evaluation when due (``PeriodicEvaluator``); its scores join the update's metrics, and its
    recorded episode, where it records one, the update's videos."""

    def __init__(self, evaluator: PeriodicEvaluator, agent: Callable[[], Agent]):
        self.evaluator, self.agent = evaluator, agent

    def after_update(self, report: UpdateReport) -> None:
        if self.evaluator.due(report.step, final=report.final):
            agent = self.agent()
            report.metrics |= self.evaluator.evaluate(agent)
            if self.evaluator.records_video:
                video = report.videos["eval/video"] = self.evaluator.record(agent)
                report.metrics["eval/video_return"] = video.episode_return


class LogHook:
    """Finished episodes to ``episodes.csv``, metrics to ``metrics.csv`` and TensorBoard, every update; videos to
    TensorBoard."""

    def __init__(self, logger: RunLogger):
        self.logger = logger

    def after_update(self, report: UpdateReport) -> None:
        stats = report.stats
        self.logger.log_episodes(stats.episode_steps, stats.episode_returns, stats.episode_lengths)
        self.logger.log_metrics(report.step, report.metrics)
        for tag, video in report.videos.items():
            self.logger.log_video(tag, video, report.step)
        self.logger.flush()


class CheckpointHook:
    """A checkpoint every ``every`` updates and at the end."""

    def __init__(self, every: int, save: Callable[[bool], None]):
        self.every, self.save = every, save

    def after_update(self, report: UpdateReport) -> None:
        if report.update % self.every == 0 or report.final:
            self.save(report.healthy)


class ProgressHook:
    """The progress bar: steps, steps/s, ETA and the recent training return."""

    def __init__(self, bar: tqdm, total: int):
        self.bar, self.total = bar, total

    def after_update(self, report: UpdateReport) -> None:
        self.bar.update(min(report.step, self.total) - self.bar.n)
        if report.recent_episodes:
            recent = report.metrics["rollout/recent_return_mean"]
            self.bar.set_postfix_str(f"return(last {report.recent_episodes}) {recent:.1f}", refresh=False)


class ProgressLines:
    """Progress where no bar can be drawn (stderr a file, a pipe, a scheduler's log): after the first update that ends
    ``interval`` seconds of the ``clock`` after the last line (or the start), a line of the step, the steps/s since,
    the recent training return and the time left at that speed (the run's own summary closes it)."""

    def __init__(self, total: int, start_step: int, interval: float = 60.0, clock: Callable[[], float] = time.monotonic,
                 write: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True)):
        self.total, self.interval, self.clock, self.write = total, interval, clock, write
        self.last_step, self.last_time = start_step, clock()

    def after_update(self, report: UpdateReport) -> None:
        now = self.clock()
        if now - self.last_time < self.interval or report.final:
            return
        speed = (report.step - self.last_step) / max(now - self.last_time, 1e-9)
        parts = [f"voidrl: step {min(report.step, self.total):,}/{self.total:,} ({min(report.step, self.total) / self.total:.0%})",
                 f"{speed:,.0f} steps/s"]
        if report.recent_episodes:
            parts.append(f"return(last {report.recent_episodes}) {report.metrics['rollout/recent_return_mean']:.1f}")
        parts.append(f"ETA {duration(max(self.total - report.step, 0) / max(speed, 1e-9))}")
        self.write(", ".join(parts))
        self.last_step, self.last_time = report.step, now


def duration(seconds: float) -> str:
    """``1 h 02 min``, ``3 min 05 s`` or ``42 s``."""
    seconds = round(seconds)
    if seconds >= 3600:
        return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"
    if seconds >= 60:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds} s"


class CallbackHook:
    """The user's callbacks (``voidrl.callbacks.Callback``), checked against the run and given its agent (``agent``)
    before the run writes anything. After each update every callback's ``on_rollout`` gets the ``rollout/`` metrics,
    then every ``on_update`` the others but ``eval/``, then, where the run evaluated, every ``on_evaluation`` the
    ``eval/`` ones; each call a copy of its own. The first call that returns False before the run's last update is
    named in ``stop_reason``: the loop then stops the run as a stop signal would."""

    def __init__(self, callbacks: Sequence[Callback], config: TrainConfig, agent: Callable[[], Agent]):
        for callback in callbacks:
            if not isinstance(callback, Callback):
                raise TypeError(f"callbacks must be voidrl.callbacks.Callback objects, got {callback!r}")
            callback.check_run(config)
        for callback in callbacks:
            callback.agent = agent
        self.callbacks = list(callbacks)
        self.stop_reason: str | None = None
        """``Class.method`` of the first call that asked the run to stop; None while none has."""

    def after_update(self, report: UpdateReport) -> None:
        method_of_prefix = {"rollout/": "on_rollout", "eval/": "on_evaluation"}
        calls: dict[str, dict[str, float]] = {"on_rollout": {}, "on_update": {}, "on_evaluation": {}}
        for name, value in report.metrics.items():
            calls[method_of_prefix.get(name[:name.find("/") + 1], "on_update")][name] = value
        if not calls["on_evaluation"]:  # the run did not evaluate at this step
            del calls["on_evaluation"]
        for method, metrics in calls.items():
            for callback in self.callbacks:
                asks_to_stop = getattr(callback, method)(report.step, dict(metrics)) is False
                if asks_to_stop and self.stop_reason is None and not report.final:
                    self.stop_reason = f"{type(callback).__name__}.{method}"
