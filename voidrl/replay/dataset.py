"""The learner's dataset iterator (Acme's): a replay's batches, each as its rate limiter earns it."""

from __future__ import annotations

from collections.abc import Iterator

from voidrl.replay.base import Replay, SequenceBatch


class ReplayDataset(Iterator[SequenceBatch]):
    """The batches ``replay`` gives as its rate limiter earns them (``Replay.sample_due``). Nothing waits for one:
    ``ready()`` says whether a batch is due now, sampling it ahead, and ``next()`` hands it over; a learner takes
    ``next(dataset)`` while the dataset is ready.

    The replay is asked once a batch, and once more to hear that none is left unless it said so with the last batch
    given: then ``ready()`` answers False once without asking (a replay across a Ray call is asked no more than it
    must), and asks again the time after.
    """

    def __init__(self, replay: Replay):
        self.replay = replay
        self.sampled: SequenceBatch | None = None
        """The batch sampled ahead by ``ready()``, until ``next()`` takes it."""
        self.more_due = True
        """The replay's last answer: another batch was due after the one it gave."""

    def ready(self) -> bool:
        """A batch is due now (sampled ahead, for ``next()``)."""
        if self.sampled is None:
            if not self.more_due:
                self.more_due = True
                return False
            due = self.replay.sample_due()
            if due is None:
                return False
            self.sampled, self.more_due = due
        return True

    def __next__(self) -> SequenceBatch:
        if not self.ready():
            raise RuntimeError("no batch is due: the replay's rate limiter earns the next one as sequences arrive (ask ready() first)")
        batch, self.sampled = self.sampled, None
        return batch
