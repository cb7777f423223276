"""Beyond one process: actors on Ray feeding one learner (``--actors N``, engine.py; its loop is ``voidrl.training.ray_loop``).
The collectives of data-parallel runs launched by ``torchrun`` are ``voidrl.collective``, a leaf that the math, the
networks and the algorithms call."""

from __future__ import annotations

import os


def launched_by_torchrun() -> bool:
    """This process is one of several that ``torchrun`` started (it sets ``WORLD_SIZE``); no torch imported to ask."""
    return int(os.environ.get("WORLD_SIZE", "1")) > 1
