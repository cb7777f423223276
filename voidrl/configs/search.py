"""Search spaces: what ``voidrl tune`` samples for an algorithm, declared as data beside its presets
(``AlgorithmConfig.search_space``: option -> dimension). A dimension is ``("float", low, high)``, ``("log_float", low,
high)`` (sampled uniformly in log space), ``("int", low, high)`` (both included) or ``("categorical", [choices])``
with choices of None, bool, int, float or str (what Optuna stores)."""

from __future__ import annotations

import dataclasses
from typing import Any

DIMENSION_KINDS = ("float", "log_float", "int", "categorical")


def check_search_space(config_class: type) -> None:
    """Each dimension of ``config_class.search_space`` names a field of the config and has a known kind and sensible
    bounds (low < high, low > 0 in log space, distinct scalar choices), and each value at its edges (every bound,
    every choice) set alone on the defaults passes the field's type check and the config's ``validate``; else a
    ValueError naming the option."""
    from voidrl.validation import check_field_types

    fields = {f.name for f in dataclasses.fields(config_class)}
    for name, dimension in config_class.search_space.items():
        if name not in fields:
            raise ValueError(f"search space of {config_class.__name__}: {name!r} is not one of its options")
        for value in edges(name, dimension):
            config = config_class()
            setattr(config, name, value)
            try:
                check_field_types(config)
                config.validate()
            except ValueError as error:
                raise ValueError(f"search space of {config_class.__name__}: {name} = {value!r} is refused ({error})") from None


def edges(name: str, dimension: tuple[Any, ...]) -> list[Any]:
    """The values at the edges of ``dimension`` (its bounds, or its choices), after checking its shape."""
    kind, *bounds = dimension
    if kind not in DIMENSION_KINDS:
        raise ValueError(f"search space: {name} has kind {kind!r}; choose one of {', '.join(DIMENSION_KINDS)}")
    if kind == "categorical":
        choices = bounds[0] if len(bounds) == 1 else None
        if not isinstance(choices, list) or len(choices) < 2 or len(set(map(repr, choices))) < len(choices) or not all(
                choice is None or isinstance(choice, (bool, int, float, str)) for choice in choices):
            raise ValueError(f"search space: {name} must offer a list of at least two distinct scalar choices, got {bounds!r}")
        return choices
    if len(bounds) != 2 or not bounds[0] < bounds[1] or (kind == "log_float" and bounds[0] <= 0) or (
            kind == "int" and not all(isinstance(bound, int) for bound in bounds)):
        raise ValueError(f"search space: {name} needs {'integer ' if kind == 'int' else ''}bounds low < high"
                         f"{' with low > 0' if kind == 'log_float' else ''}, got {bounds!r}")
    return bounds
