"""Options that change over a run: the learning rate, clip range and entropy coefficient (RL Zoo's schedules).

Such an option takes
- a number: constant;
- ``"lin_X"`` (RL Zoo's spelling): X at the start, falling linearly to 0 at the end of the step budget;
- from Python, a function of the *remaining* progress (1 at the start, 0 at the end: Stable-Baselines3's
  convention), returning the value.

Each value is a function of the steps done, which a checkpoint holds, so a resumed run takes the same values. A run
stores a function by name only (``"function:QUALNAME"``); a run given one resumes from Python with the function given
again (``resume=True``).
"""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Callable
from typing import Any

LINEAR = re.compile(r"lin_(?P<start>.+)")
FUNCTION_PREFIX = "function:"


class Schedule:
    """The annotated type of an option that takes a schedule (a number, ``"lin_X"`` or a function); never built."""

    def __init__(self) -> None:
        raise TypeError("Schedule only annotates options; give a number, 'lin_X' or a function")


def linear_start(text: str) -> float | None:
    """X of ``"lin_X"``, or None where ``text`` is not that spelling with a finite number."""
    match = LINEAR.fullmatch(text)
    if match is None:
        return None
    try:
        start = float(match["start"])
    except ValueError:
        return None
    return start if math.isfinite(start) else None


def schedule_value(schedule: float | str | Callable[[float], float], progress: float) -> float:
    """The value of ``schedule`` once the fraction ``progress`` in [0, 1] of the budget is spent."""
    if callable(schedule):
        return float(schedule(1.0 - progress))
    if isinstance(schedule, str):
        start = linear_start(schedule)
        if start is None:
            raise ValueError(f"not a schedule: {schedule!r}")
        return start * (1.0 - progress)
    return float(schedule)


def is_constant(schedule: Any) -> bool:
    return isinstance(schedule, (int, float)) and not isinstance(schedule, bool)


def stored_schedule(schedule: Any) -> Any:
    """What a run's config.json holds for ``schedule``: a function by name (``"function:QUALNAME"``), else itself."""
    if callable(schedule):
        return FUNCTION_PREFIX + getattr(schedule, "__qualname__", type(schedule).__qualname__)
    return schedule


def is_stored_function(value: Any) -> bool:
    """Whether ``value`` is what config.json holds for a function (``stored_schedule``)."""
    return isinstance(value, str) and value.startswith(FUNCTION_PREFIX)


def schedule_problem(name: str, value: Any) -> str | None:
    """Why ``value`` cannot be option ``name``'s schedule, in a sentence naming the option; None when it can."""
    if is_stored_function(value):
        return (f"{name} was given from Python as the function {value[len(FUNCTION_PREFIX):]}, which a run stores by "
                f"name only: resume from Python giving {name}=<that function> again with resume=True")
    if isinstance(value, str) and linear_start(value) is None:
        return f"{name} must be a number, 'lin_X' (X falling linearly to 0 over the run) or, from Python, a function; got {value!r}"
    if isinstance(value, bool) or not (isinstance(value, (int, float, str)) or callable(value)):
        return f"{name} must be a number, 'lin_X' or, from Python, a function of the remaining progress; got {value!r}"
    if is_constant(value):
        return None if math.isfinite(value) else f"{name} must be a finite number, got {value!r}"
    try:
        start = schedule_value(value, 0.0)
    except Exception as error:  # a user's function: whatever it raises is reported, not a traceback
        return f"{name}: the function given raised {type(error).__name__} at remaining progress 1.0 ({error})"
    if not math.isfinite(start):
        return f"{name}: the function given returned {start} at remaining progress 1.0; it must return a finite number"
    return None


def starting_value(value: Any) -> Any:
    """A schedule's value at the start of the run (what range checks read); any other value as it is."""
    if callable(value) or (isinstance(value, str) and linear_start(value) is not None):
        return schedule_value(value, 0.0)
    return value


def parse_schedule(text: str) -> float | str:
    """``--learning-rate`` and the like on the command line: a number or ``lin_X``."""
    try:
        return float(text)
    except ValueError:
        pass
    if linear_start(text) is None:
        raise argparse.ArgumentTypeError(f"expected a number or lin_X (X falling linearly to 0 over the run), got {text!r}")
    return text
