"""Field checks shared by every config: each raises ``ValueError`` naming the field and what it allows."""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Callable, Iterable
from typing import Any

from voidrl.schedule import Schedule, schedule_problem, starting_value


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


def check_field_types(config: Any) -> None:
    """Every field of dataclass ``config`` holds a value of its annotated type, and floats are finite.

    An int is accepted for a float field; None only where the field is optional.
    """
    for field_ in dataclasses.fields(config):
        name, value = field_.name, getattr(config, field_.name)
        base, optional = field_type(type(config), name)
        if value is None and optional:
            continue
        if base is Schedule:
            problem = schedule_problem(name, value)
            if problem is not None:
                raise ValueError(problem)
            continue
        sequence = typing.get_origin(base) is tuple
        kind = typing.get_args(base)[0] if sequence else base
        items = value if sequence and isinstance(value, tuple) else (value,)
        if (sequence and not isinstance(value, tuple)) or not all(_is_instance(item, kind) for item in items):
            expected = f"a sequence of {kind.__name__} values" if sequence else f"{'an' if kind is int else 'a'} {kind.__name__}"
            raise ValueError(f"{name} must be {expected}{' or None' if optional else ''}, got {value!r}")
        if kind is float and not all(math.isfinite(item) for item in items):
            raise ValueError(f"{name} must be a finite number, got {value!r}")


def _is_instance(value: Any, kind: type) -> bool:
    if kind is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, kind)


def field_type(cls: type, name: str) -> tuple[type, bool]:
    """``(base type, optional)`` of a field: ``float | None`` -> ``(float, True)``."""
    hint = typing.get_type_hints(cls)[name]
    args = typing.get_args(hint)
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        base = next(a for a in args if a is not type(None))
        return base, True
    return hint, False
