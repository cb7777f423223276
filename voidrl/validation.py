"""Field checks shared by every config: each raises ``ValueError`` naming the field and what it allows."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from voidrl.configs.schedule import starting_value


MAX_SEED = 2**31 - 1
"""The largest seed: environment seeds are taken modulo 2**31, so above it (or below 0) two seeds would give one run."""


def check_seed(seed: int, option: str = "seed") -> None:
    """Refuse, naming ``option``, a seed outside [0, ``MAX_SEED``], where every value gives its own run."""
    if not 0 <= seed <= MAX_SEED:
        raise ValueError(f"{option} must be from 0 to {MAX_SEED} (each value its own run), got {seed}")


def require_choice(config: Any, name: str, choices: Iterable[Any]) -> None:
    """The named field must be one of ``choices``."""
    value, choices = getattr(config, name), tuple(choices)
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(str, choices))}, got {value!r}")


def require_each(config: Any, names: tuple[str, ...], holds: Callable[[Any], bool], requirement: str) -> None:
    """Each named field that is not None (option off) must satisfy ``holds`` (a schedule: at the start of the run); else
    "<name> must <requirement>"."""
    for name in names:
        value = getattr(config, name)
        if value is not None and not holds(starting_value(value)):
            raise ValueError(f"{name} must {requirement}, got {value}")


def require_positive_integers(config: Any, names: tuple[str, ...]) -> None:
    """Each named field must be >= 1."""
    require_each(config, names, lambda value: value >= 1, "be a positive integer")


def require_positive(config: Any, names: tuple[str, ...]) -> None:
    """Each named field must be > 0."""
    require_each(config, names, lambda value: value > 0, "be positive")


def require_non_negative(config: Any, names: tuple[str, ...]) -> None:
    """Each named field must be >= 0 (a weight or coefficient that 0 turns off)."""
    require_each(config, names, lambda value: value >= 0, "be >= 0")


def validate_fraction(name: str, value: Any, low: float = 0.0, high: float = 1.0) -> None:
    """``value`` (a schedule: at the start of the run) lies in (low, high)."""
    if not low < starting_value(value) < high:
        raise ValueError(f"{name} must lie in ({low:g}, {high:g}), got {value}")


def validate_hidden_sizes(hidden_sizes: tuple[int, ...]) -> None:
    if any(size < 1 for size in hidden_sizes):
        raise ValueError(f"hidden_sizes must be positive integers, got {' '.join(map(str, hidden_sizes))}")
