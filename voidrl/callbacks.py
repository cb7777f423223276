"""What a training run calls besides learning: ``voidrl.train(..., callbacks=[...])``.

A callback is a Python object, not an option: it is not written to ``config.json`` or the checkpoint, and a resumed
run has the callbacks its call gives it. Three are ready: ``StopOnReturn`` (stop at a return threshold), ``KeepBest``
(save the agent of the best evaluation to a file) and ``LogTo`` (every metric to a function of yours). Imports no
torch.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from voidrl.config import TrainConfig
    from voidrl.training.agent import Agent

EVALUATION_RETURN = "eval/return_mean"
"""The mean return of a greedy evaluation's episodes (``eval_every``)."""
TRAINING_RETURN = "rollout/recent_return_mean"
"""The mean return of the last 20 finished training episodes (absent until one has finished)."""


class Callback:
    """Subclass it and override what you need. After each update the run calls, in this order, each method of every
    callback (in the order given) with the environment steps so far and a dict of the metrics, its own copy:

    - ``on_rollout(step, metrics)``: the ``rollout/`` metrics of the rollout the update learnt from
      (``rollout/recent_return_mean`` once a training episode has ended);
    - ``on_update(step, metrics)``: the update's other metrics (``train/``, ``time/``, ``sys/``, a plug-in's);
    - ``on_evaluation(step, metrics)``: only where the run evaluated at this step (``eval_every``, and at the end), its
      ``eval/`` metrics (``eval/return_mean``, ``eval/return_std``).

    All three come after the update (the run's logs and checkpoint included): the loop's safe point, where a stop
    signal is honoured too. A method returns None to go on, or False to stop the run: the calls of this update are
    made, then the run stops as on SIGINT, with a checkpoint at this step, and ``voidrl.train`` returns the agent;
    ``resume=True`` continues the run. No final evaluation is added at that step; at the run's last update a stop
    changes nothing.

    ``self.agent()``, during a call, is the run's ``Agent`` as it stands: its policy the network being trained (``save``
    writes a copy), its normaliser statistics those of this step. In a data-parallel run (``torchrun``) the callbacks are called
    on rank 0, where the metrics are, and a stop stops every rank (the others as by a stop signal).
    """

    def check_run(self, config: TrainConfig) -> None:
        """Called before the run writes anything: raise ``ValueError`` where this callback cannot serve the run
        ``config`` describes (it watches evaluations and the run makes none, its file cannot be written)."""

    def agent(self) -> Agent:
        """The run's agent at the current step; the run puts its own function here before its first call."""
        raise RuntimeError(f"{type(self).__name__}.agent(): no training run has called this callback yet")

    def on_rollout(self, step: int, metrics: dict[str, float]) -> bool | None:
        """The ``rollout/`` metrics of the rollout learnt from by the update that ended at ``step``."""

    def on_update(self, step: int, metrics: dict[str, float]) -> bool | None:
        """The metrics of the update that ended at ``step``, but its ``rollout/`` and ``eval/`` ones."""

    def on_evaluation(self, step: int, metrics: dict[str, float]) -> bool | None:
        """The ``eval/`` metrics of the evaluation at ``step``."""


def require_evaluations(callback: Callback, config: TrainConfig) -> None:
    """A ``ValueError`` naming ``callback`` where the run makes no evaluation (``eval_every`` None)."""
    if config.run.eval_every is None:
        raise ValueError(f"{type(callback).__name__} watches the evaluations, and this run makes none: give eval_every "
                         "(--eval-every) too")


class StopOnReturn(Callback):
    """Stop the run once a mean return reaches ``threshold``: the greedy evaluation's (``eval/return_mean``, which
    needs ``eval_every``), or with ``training`` the last 20 training episodes' (``rollout/recent_return_mean``:
    sampled actions, a moving window, and so noisier but free)."""

    def __init__(self, threshold: float, training: bool = False):
        self.threshold = threshold
        self.training = training

    def check_run(self, config: TrainConfig) -> None:
        if not self.training:
            require_evaluations(self, config)

    def reached(self, metrics: dict[str, float], name: str) -> bool:
        return metrics.get(name, -math.inf) >= self.threshold

    def on_rollout(self, step: int, metrics: dict[str, float]) -> bool | None:
        return False if self.training and self.reached(metrics, TRAINING_RETURN) else None

    def on_evaluation(self, step: int, metrics: dict[str, float]) -> bool | None:
        return False if not self.training and self.reached(metrics, EVALUATION_RETURN) else None


class KeepBest(Callback):
    """Write the agent to ``path`` (``voidrl.load`` reads it) at each evaluation whose mean return beats the earlier
    ones this callback saw; needs ``eval_every``. ``best_return`` and ``best_step`` say which it holds.

    Callbacks are not checkpointed: in a resumed run the first evaluation writes the file again whatever its score.
    The run's own ``best.pt`` (with ``eval_every``) keeps the best over resumes.
    """

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.best_return = -math.inf
        self.best_step: int | None = None

    def check_run(self, config: TrainConfig) -> None:
        from voidrl.io.run_dir import check_writable_dir

        require_evaluations(self, config)
        if self.path.is_dir():
            raise ValueError(f"KeepBest: {str(self.path)!r} is a directory; give the file to write")
        check_writable_dir(self.path.parent, "KeepBest's folder")

    def on_evaluation(self, step: int, metrics: dict[str, float]) -> None:
        if metrics[EVALUATION_RETURN] > self.best_return:
            self.best_return, self.best_step = metrics[EVALUATION_RETURN], step
            self.agent().save(self.path)


class LogTo(Callback):
    """Every metric the run logs, to ``sink(step, metrics)`` as well: once with each update's ``rollout/`` metrics
    (where it has any), once with its others, and once with each evaluation's ``eval/`` metrics (e.g. ``LogTo(print)``, or a function
    that hands them to MLflow or a dashboard of your own)."""

    def __init__(self, sink: Callable[[int, dict[str, float]], object]):
        if not callable(sink):
            raise TypeError(f"LogTo takes a function of (step, metrics), got {sink!r}")
        self.sink = sink

    def on_rollout(self, step: int, metrics: dict[str, float]) -> None:
        if metrics:
            self.sink(step, metrics)

    on_update = on_evaluation = on_rollout
