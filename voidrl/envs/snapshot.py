"""Episodes in progress as plain data, so that a resumed run continues every episode where it stopped.

A checkpoint keeps them as what ``torch.load(weights_only=True)`` reads back: numbers, strings, bytes, None,
lists, tuples and string-keyed dicts. NumPy arrays, scalars and random states become tagged dicts of bytes, and
reading them back checks their dtype and size, so no object is ever unpickled and a crafted state is refused.

Saved here: classic control (gymnasium's state arrays and random generator) and MinAtar (each game's fields);
wrappers whose state is known (time limits); any environment that offers its state through ``SAVES_EPISODES``'s two
methods (with its gymnasium random generator, ``np_random``). Anything else raises ``NotSaveable`` naming what could not
be saved, and the run's episodes then start anew when it resumes.
"""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.envs.classic_control import AcrobotEnv, CartPoleEnv, Continuous_MountainCarEnv, MountainCarEnv, PendulumEnv

ARRAY, SCALAR, RANDOM_STATE = "__ndarray__", "__numpy_scalar__", "__random_state__"
NUMERIC_KINDS = "biuf"

CLASSIC_CONTROL_FIELDS: dict[type, tuple[str, ...]] = {
    CartPoleEnv: ("state", "steps_beyond_terminated"),
    AcrobotEnv: ("state",),
    MountainCarEnv: ("state",),
    Continuous_MountainCarEnv: ("state",),
    PendulumEnv: ("state", "last_u"),
}
"""The fields of each classic-control environment that change during an episode (its random generator besides)."""

WRAPPER_FIELDS: dict[str, tuple[str, ...]] = {
    "TimeLimit": ("_elapsed_steps",),
    "OrderEnforcing": ("_has_reset",),
    "PassiveEnvChecker": (),
    "ActionRepeat": (),
    "MinAtarPixels": (),
    "CheckedSteps": (),
    "ChannelsFirst": (),
    "ZeroBasedDiscrete": (),
    "FlattenObservation": (),
    "ReshapeObservation": (),
    "RescaleAction": (),
}
"""The state of each gymnasium wrapper a training environment may have, by class name; a wrapper not listed is not saved."""
CHECKS_DONE = {"PassiveEnvChecker": {"checked_reset": True, "checked_step": True, "checked_data_reuse": True}}
"""Set on loading: gymnasium's checks of a first reset and steps were made in the run that saved the episodes."""


SAVES_EPISODES = ("episode_state", "load_episode_state")
"""The protocol by which an environment of a user's offers its episode in progress, so that a resumed run continues it
exactly: ``env.episode_state()`` returns plain data (numbers, strings, bytes, None, NumPy arrays, and lists, tuples and
string-keyed dicts of these) and ``env.load_episode_state(state)`` takes it back on an environment built as that one
was. voidrl keeps the environment's ``np_random`` beside it."""
PROTOCOL_FIELDS = ("episode", "np_random")
"""What a checkpoint keeps of an environment with ``SAVES_EPISODES``."""


class NotSaveable(Exception):
    """An environment's episodes cannot be written as plain data; the message says which part and why."""


def to_plain(value: Any, where: str) -> Any:
    """``value`` as plain data (see the module's docstring); ``where`` names it in a ``NotSaveable``."""
    if value is None or isinstance(value, (bool, int, float, str, bytes)):
        return value
    if isinstance(value, np.generic):
        if value.dtype.kind not in NUMERIC_KINDS:
            raise NotSaveable(f"{where}: a NumPy {value.dtype} scalar")
        return {SCALAR: value.dtype.str, "bytes": value.tobytes()}
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in NUMERIC_KINDS:
            raise NotSaveable(f"{where}: a NumPy array of {value.dtype}")
        return {ARRAY: value.dtype.str, "shape": list(value.shape), "bytes": np.ascontiguousarray(value).tobytes()}
    if isinstance(value, np.random.RandomState):
        return {RANDOM_STATE: to_plain(value.get_state(), where)}
    if isinstance(value, (list, tuple)):
        items = [to_plain(item, f"{where}[{i}]") for i, item in enumerate(value)]
        return items if isinstance(value, list) else tuple(items)
    if isinstance(value, dict) and all(isinstance(key, str) and not key.startswith("__") for key in value):
        return {key: to_plain(item, f"{where}.{key}") for key, item in value.items()}
    raise NotSaveable(f"{where}: a {type(value).__name__}")


def from_plain(plain: Any, where: str) -> Any:
    """The value ``to_plain`` made ``plain`` from; a ``ValueError`` naming ``where`` for anything it cannot have made."""
    if plain is None or isinstance(plain, (bool, int, float, str, bytes)):
        return plain
    if isinstance(plain, (list, tuple)):
        items = [from_plain(item, f"{where}[{i}]") for i, item in enumerate(plain)]
        return items if isinstance(plain, list) else tuple(items)
    if not isinstance(plain, dict):
        raise ValueError(f"{where}: a {type(plain).__name__} is not environment state")
    if ARRAY in plain or SCALAR in plain:
        shape = plain.get("shape", [])
        dtype = _numeric_dtype(plain.get(ARRAY, plain.get(SCALAR)), where)
        data = plain.get("bytes")
        if (not isinstance(shape, list) or not all(isinstance(n, int) and n >= 0 for n in shape)
                or not isinstance(data, bytes) or len(data) != math.prod(shape) * dtype.itemsize):
            raise ValueError(f"{where}: a damaged array (shape {shape!r}, {type(data).__name__} of the wrong size)")
        array = np.frombuffer(data, dtype=dtype).reshape(shape).copy()
        return array if ARRAY in plain else array[()]
    if RANDOM_STATE in plain:
        random = np.random.RandomState()
        try:
            random.set_state(from_plain(plain[RANDOM_STATE], where))
        except (TypeError, ValueError, IndexError) as error:
            raise ValueError(f"{where}: a damaged random state ({error})") from None
        return random
    return {key: from_plain(item, f"{where}.{key}") for key, item in plain.items()}


def _numeric_dtype(name: Any, where: str) -> np.dtype:
    try:
        dtype = np.dtype(name) if isinstance(name, str) else None
    except TypeError:
        dtype = None
    if dtype is None or dtype.kind not in NUMERIC_KINDS:
        raise ValueError(f"{where}: {name!r} is not a numeric dtype")
    return dtype


def env_state(env: gym.Env, where: str) -> dict[str, Any]:
    """The plain state of one gymnasium env in the middle of an episode: its wrappers' and its core's."""
    wrappers = []
    while isinstance(env, gym.Wrapper):
        fields = WRAPPER_FIELDS.get(type(env).__name__)
        if fields is None:
            raise NotSaveable(f"{where}: the {type(env).__name__} wrapper")
        wrappers.append({name: getattr(env, name) for name in fields})
        env = env.env
    return {"wrappers": to_plain(wrappers, where), "core": to_plain(_core_state(env, where), where)}


def load_env_state(env: gym.Env, state: Any, where: str) -> None:
    """Set one gymnasium env (built as the saved one was) to the state ``env_state`` wrote."""
    if not isinstance(state, dict) or set(state) != {"wrappers", "core"}:
        raise ValueError(f"{where}: not an environment state")
    wrappers = from_plain(state["wrappers"], where)
    chain = []
    while isinstance(env, gym.Wrapper):
        chain.append(env)
        env = env.env
    if not isinstance(wrappers, list) or len(wrappers) != len(chain):
        raise ValueError(f"{where}: the saved state has {len(wrappers)} wrappers, this environment {len(chain)}")
    for wrapper, fields in zip(chain, wrappers):
        _set_fields(wrapper, fields, WRAPPER_FIELDS.get(type(wrapper).__name__, ()), f"{where}: {type(wrapper).__name__}")
        for name, value in CHECKS_DONE.get(type(wrapper).__name__, {}).items():
            setattr(wrapper, name, value)
    _load_core_state(env, from_plain(state["core"], where), where)


def _core_state(env: gym.Env, where: str) -> dict[str, Any]:
    fields = CLASSIC_CONTROL_FIELDS.get(type(env))
    if fields is not None:
        return {**{name: getattr(env, name) for name in fields}, "np_random": env.np_random.bit_generator.state}
    if all(callable(getattr(env, name, None)) for name in SAVES_EPISODES):
        return {"episode": env.episode_state(), "np_random": env.np_random.bit_generator.state}
    game = getattr(env, "game", None)
    if type(env).__module__ == "minatar.gym" and game is not None:
        fields = {name: value for name, value in vars(game.env).items() if name != "random"}
        return {"random": game.random, "last_action": game.last_action, "game": fields}
    raise NotSaveable(f"{where}: {type(env).__name__} (its state is not one voidrl knows how to save)")


def _load_core_state(env: gym.Env, state: Any, where: str) -> None:
    fields = CLASSIC_CONTROL_FIELDS.get(type(env))
    if fields is not None:
        if not isinstance(state, dict) or set(state) != {*fields, "np_random"}:
            raise ValueError(f"{where}: not the state of a {type(env).__name__}")
        _set_fields(env, {name: state[name] for name in fields}, fields, where)
        try:
            env.np_random.bit_generator.state = state["np_random"]
        except (TypeError, ValueError, KeyError, IndexError) as error:
            raise ValueError(f"{where}: a damaged random generator state ({error})") from None
        return
    if all(callable(getattr(env, name, None)) for name in SAVES_EPISODES):
        if not isinstance(state, dict) or set(state) != set(PROTOCOL_FIELDS):
            raise ValueError(f"{where}: not the state {type(env).__name__}.episode_state() saved")
        try:
            env.np_random.bit_generator.state = state["np_random"]
        except (TypeError, ValueError, KeyError, IndexError) as error:
            raise ValueError(f"{where}: a damaged random generator state ({error})") from None
        env.load_episode_state(state["episode"])
        return
    if not isinstance(state, dict) or set(state) != {"random", "last_action", "game"}:
        raise ValueError(f"{where}: not the state of a {type(env).__name__}")
    game = env.game
    _set_fields(game.env, state["game"], tuple(name for name in vars(game.env) if name != "random"), where)
    if not isinstance(state["random"], np.random.RandomState) or not isinstance(state["last_action"], int):
        raise ValueError(f"{where}: a damaged MinAtar state")
    game.random = game.env.random = state["random"]
    game.last_action = state["last_action"]


def _set_fields(target: Any, fields: Any, names: tuple[str, ...], where: str) -> None:
    if not isinstance(fields, dict) or set(fields) != set(names):
        got = sorted(fields) if isinstance(fields, dict) else type(fields).__name__
        raise ValueError(f"{where}: the saved fields {got} are not this environment's {sorted(names)}")
    for name, value in fields.items():
        setattr(target, name, value)
