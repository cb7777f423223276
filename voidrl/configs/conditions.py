"""Where an option acts: each config class declares, in its ``acts_only`` table (field -> condition), the options
that act on some runs only (``episodic_life`` on Atari games, ``mixture_modes`` with the mixture policy), and a run
refuses those the user gave where their condition fails, in one line naming the option, what it needs and what the
run has instead (``inert_options``). Options a preset or a default sets are left alone: a preset sets what suits the
environments it serves. Imports nothing from voidrl; conditions read the run's facts, gathered by ``TrainConfig``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RunFacts:
    """What decides whether an option can act on a run."""

    options: Mapping[str, Any]
    """Every option of the run by name (the fields of all its config sections)."""
    env_id: str
    suite: str
    """The environment's suite (``voidrl.envs.suites.suite_of``)."""
    action_space: Any = None
    """The environment's action space (a gymnasium space) once it is built; None before, where conditions on it hold."""
    obs_shape: tuple[int, ...] | None = None
    """The shape of the observations the agent sees once the environment is built; None before."""


class Condition:
    """What an option needs in order to act: ``need`` says it, ``unmet`` tests a run for it."""

    need: str
    """How the refusal says what the option needs: "<option> acts <need> only"."""

    def unmet(self, run: RunFacts) -> str | None:
        """What ``run`` has instead, where the option cannot act on it; None where it can (or cannot be told yet)."""
        raise NotImplementedError

    def failure(self, run: RunFacts) -> tuple[str, str] | None:
        """``(need, what the run has instead)`` where the option cannot act on ``run``; None where it can."""
        found = self.unmet(run)
        return None if found is None else (self.need, found)


class Choice(Condition):
    """Option ``name`` holds one of ``values``."""

    def __init__(self, name: str, *values: Any):
        self.name, self.values = name, values
        self.need = f"with {name} {' or '.join(map(str, values))}"

    def unmet(self, run: RunFacts) -> str | None:
        value = run.options[self.name]
        return None if value in self.values else f"this run has {self.name} {value}"


class Unless(Condition):
    """Option ``name`` holds anything but ``value``."""

    def __init__(self, name: str, value: Any):
        self.name, self.value = name, value
        self.need = f"with {name} other than {value}"

    def unmet(self, run: RunFacts) -> str | None:
        return f"this run has {self.name} {self.value}" if run.options[self.name] == self.value else None


class IsSet(Condition):
    """Option ``name`` is set (not None)."""

    def __init__(self, name: str):
        self.name, self.need = name, f"with {name} set"

    def unmet(self, run: RunFacts) -> str | None:
        return f"this run leaves {self.name} unset" if run.options[self.name] is None else None


class Positive(Condition):
    """Option ``name`` is above 0 (the feature it counts is on)."""

    def __init__(self, name: str):
        self.name, self.need = name, f"with {name} above 0"

    def unmet(self, run: RunFacts) -> str | None:
        value = run.options[self.name]
        return None if value > 0 else f"this run has {self.name} {value}"


class Suites(Condition):
    """The environment is of one of ``suites``; ``need`` names them for the refusal ("on Atari games")."""

    def __init__(self, need: str, *suites: str):
        self.need, self.suites = need, suites

    def unmet(self, run: RunFacts) -> str | None:
        if run.suite in self.suites:
            return None
        return f"{run.env_id} is a{'n' if run.suite[0] in 'aeiou' else ''} {run.suite} environment"


class BoxActions(Condition):
    """The environment's actions are a Box (continuous): told once the environment is built."""

    need = "with Box (continuous) actions"

    def unmet(self, run: RunFacts) -> str | None:
        if run.action_space is None:
            return None
        import gymnasium as gym

        return None if isinstance(run.action_space, gym.spaces.Box) else f"{run.env_id}'s actions are {run.action_space}"


class VectorObservations(Condition):
    """The agent sees vectors (not frames): told once the environment is built."""

    need = "on vector observations"

    def unmet(self, run: RunFacts) -> str | None:
        if run.obs_shape is None or len(run.obs_shape) == 1:
            return None
        return f"{run.env_id}'s observations are frames of shape {run.obs_shape}"


class MlpBody(Condition):
    """One of the bodies the options ``networks`` name is an MLP: ``mlp``, or ``auto`` on vector observations (a None
    network, as PPG's critic_network, is the first one's kind)."""

    need = "on an mlp body"

    def __init__(self, *networks: str):
        self.networks = networks

    def unmet(self, run: RunFacts) -> str | None:
        kinds = [run.options[name] for name in self.networks if run.options[name] is not None]
        if "mlp" in kinds or ("auto" in kinds and (run.obs_shape is None or len(run.obs_shape) == 1)):
            return None
        if "auto" in kinds:
            return f"network auto builds a CNN for {run.env_id}'s frames of shape {run.obs_shape}"
        return f"this run has {' and '.join(f'{name} {run.options[name]}' for name in self.networks if run.options[name] is not None)}"


class AllOf(Condition):
    """Every one of ``conditions``; a refusal names the first that fails."""

    def __init__(self, *conditions: Condition):
        self.conditions = conditions
        self.need = " and ".join(condition.need for condition in conditions)

    def failure(self, run: RunFacts) -> tuple[str, str] | None:
        return next((failed for condition in self.conditions if (failed := condition.failure(run)) is not None), None)


class Never(Condition):
    """The option cannot act in this config's algorithm: ``need`` says where it does, ``reason`` why not here."""

    def __init__(self, need: str, reason: str):
        self.need, self.reason = need, reason

    def unmet(self, run: RunFacts) -> str | None:
        return self.reason


def conditions_of(cls: type) -> dict[str, Condition]:
    """The ``acts_only`` tables of ``cls`` and its bases merged, a subclass's entries over its bases'."""
    return {name: condition for base in reversed(cls.__mro__) for name, condition in vars(base).get("acts_only", {}).items()}


def inert_options(sections: Iterable[Any], given: Iterable[str], run: RunFacts) -> str | None:
    """The one line that refuses the options among ``given`` that cannot act on ``run`` under the ``acts_only``
    conditions of the config ``sections``, those that fail alike named together; None where every one can act."""
    given = set(given)
    refused: dict[tuple[str, str], list[str]] = {}
    for section in sections:
        for name, condition in conditions_of(type(section)).items():
            if name in given and (failure := condition.failure(run)) is not None:
                refused.setdefault(failure, []).append(name)
    if not refused:
        return None
    return "; ".join(f"{' and '.join(names)} act{'s' if len(names) == 1 else ''} {need} only; {found}: leave "
                     f"{'it' if len(names) == 1 else 'them'} out" for (need, found), names in refused.items())
