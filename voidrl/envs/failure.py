"""What an environment that fails mid-run raises through voidrl (no torch: the command line catches it)."""

from __future__ import annotations

import traceback
from pathlib import Path

import gymnasium as gym


class EnvironmentFailure(RuntimeError):
    """An environment raised in ``reset`` or ``step`` (or returned what cannot be trained on); ``__cause__`` is its
    own exception, whose traceback is the one its author needs. ``at_step`` adds the run's step to the message."""

    def __init__(self, env_id: str, call: str, error: BaseException, step: int | None = None):
        self.env_id, self.call, self.error, self.step = env_id, call, error, step
        where = "" if step is None else f" at run step {step:,}"
        super().__init__(f"environment {env_id} failed in {call}{where}: {type(error).__name__}: {error}")

    def at_step(self, step: int) -> EnvironmentFailure:
        failure = EnvironmentFailure(self.env_id, self.call, self.error, step)
        failure.__cause__ = self.error
        return failure


def user_traceback(error: BaseException) -> str:
    """The traceback of ``error`` without the frames of voidrl and gymnasium: what the environment's author needs;
    empty where no frame is theirs (one of voidrl's checks refused what a step returned)."""
    internals = (str(Path(__file__).parents[1]), str(Path(gym.__file__).parent))
    frames = [frame for frame in traceback.extract_tb(error.__traceback__) if not frame.filename.startswith(internals)]
    if not frames:
        return ""
    return "".join(["Traceback (the environment's own frames):\n", *traceback.format_list(frames),
                    *traceback.format_exception_only(error)])
