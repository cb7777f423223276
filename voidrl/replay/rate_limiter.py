"""How often a replay may be sampled: a fixed ratio of samples to insertions (Acme's ``SampleToInsertRatio``,
without blocking: the learner asks, the replay answers with a batch or with nothing yet)."""

from __future__ import annotations


class SamplesPerInsert:
    """Each item inserted once ``min_size`` items are stored earns ``samples_per_insert / batch_size`` batches;
    a batch is due while a whole one is earned.

    Args:
        samples_per_insert: times each stored item is replayed on average; batch_size: items per batch;
        min_size: items stored before any batch is earned.
    """

    def __init__(self, samples_per_insert: float, batch_size: int, min_size: int):
        self.samples_per_insert, self.batch_size, self.min_size = samples_per_insert, batch_size, min_size
        self.credit = 0.0
        """Batches earned and not yet sampled (a fraction carries over)."""

    def inserted(self, count: int, size: int) -> None:
        """``count`` items went in, leaving ``size`` stored."""
        if size >= self.min_size:
            self.credit += count * self.samples_per_insert / self.batch_size

    def take(self) -> bool:
        """Spend one batch if one is earned."""
        if self.credit < 1.0:
            return False
        self.credit -= 1.0
        return True
