"""Which environment ids there are: the suites, the task variants registered here, any Gymnasium id or environment a
user brings, and the suite of an id.

An id is one of
- a suite's own id (``CartPole-v1``, ``HalfCheetah-v5``, ``MinAtar/Breakout-v1``, ``MiniGrid-DoorKey-5x5-v0``,
  ``ALE/MsPacman-v5``) or one of voidrl's variants (``voidrl/CartPoleNoVelocity-v1``);
- any other id in gymnasium's registry (``FrozenLake-v1``, a third-party package's ids once it is imported): the
  ``gymnasium`` suite;
- gymnasium's ``module:Env-vN`` form: ``module`` imported first (it registers ``Env-vN``), as ``gymnasium.make`` does;
- ``module:qualname``, an environment class or a function returning one: what ``python_env_id`` names a class or
  callable given from Python; registered with gymnasium under that id on first use.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import re
import traceback
import warnings
from collections.abc import Callable
from typing import Any

import gymnasium as gym
from gymnasium.envs.registration import EnvSpec

from voidrl.configs.choices import GENERIC_SUITE, SUITES
from voidrl.envs.roms import all_rom_names, rom_name
from voidrl.envs.variants import NAMESPACE, VARIANTS, Variant
from voidrl.extras import EXTRAS, MissingExtra, require

__all__ = ["GENERIC_SUITE", "LIST_HINT", "UnknownEnvironment", "VARIANTS", "Variant", "env_id_of", "list_env_ids", "python_env_id",
           "registered_spec", "suite_of"]

LIST_HINT = "run `voidrl envs` to list the valid ids"
VECTOR_ARGUMENTS = ("num_envs", "vectorization_mode", "vector_kwargs", "wrappers")
"""What ``gymnasium.make_vec`` keeps in its spec's arguments beside the environment's own."""
UNNAMED = "-unnamed"
"""Marks the id of an environment given from Python that no import finds (a lambda, a local class, a partial)."""
ENTRY_SUITES = {"gymnasium.envs.classic_control": "classic", "gymnasium.envs.mujoco": "mujoco", "minatar": "minatar",
                "minigrid": "minigrid", "ale_py": "atari"}
"""The suites of registered ids, by the module of their entry point."""
UNLISTED_GYMNASIUM = ("gymnasium.envs.phys2d", "gymnasium.envs.tabular")
"""gymnasium's JAX environments (functional, not ``gym.Env``): not listed."""


class UnknownEnvironment(ValueError):
    pass


OPTIONAL_SUITES = (("ale_py", "atari", ("ALE/",)), ("minigrid", "minigrid", ("MiniGrid-", "BabyAI-")),
                   ("minatar.gym", "minatar", ("MinAtar/",)))
"""The suites whose packages register their ids with gymnasium: (module, extra, the prefixes of their ids)."""


def _register_optional_suites(env_id: str = "") -> None:
    """Register the ids of the suites that are installed (ale_py and minigrid register theirs on import); ``env_id``
    of a suite that is not installed is a ``MissingExtra`` naming its extra."""
    for module, extra, prefixes in OPTIONAL_SUITES:
        try:
            package = require(module, extra, env_id)
        except MissingExtra:
            if env_id.startswith(prefixes):
                raise
            continue
        if extra == "minatar" and "MinAtar/Breakout-v1" not in gym.registry:
            package.register_envs()


def _entry_module(spec: EnvSpec) -> str:
    """The module an id's environment comes from."""
    entry = spec.entry_point
    return entry.partition(":")[0] if isinstance(entry, str) else getattr(entry, "__module__", None) or "python"


def _entry_suite(spec: EnvSpec) -> str:
    module = _entry_module(spec)
    return next((suite for prefix, suite in ENTRY_SUITES.items() if module.startswith(prefix)), GENERIC_SUITE)


def python_env_id(make: Callable[..., gym.Env], env_id: str | None = None) -> str:
    """The id of an environment class or a function returning a ``gym.Env``: ``module:qualname`` (or ``env_id``),
    registered with gymnasium under that id. A run's config.json and checkpoint keep the id; a later process finds the
    class again by importing ``module`` where it is defined at module level, and is given it otherwise
    (``voidrl.load(path, env=...)``)."""
    if isinstance(make, type) and not issubclass(make, gym.Env):
        raise ValueError(f"env: {make.__qualname__} is a class but not a gymnasium.Env; give a gymnasium.Env subclass, "
                         "a function returning one, or an id")
    if env_id is None:
        qualname = getattr(make, "__qualname__", None)
        if isinstance(qualname, str) and "<" not in qualname:
            env_id = f"{make.__module__}:{qualname}"
        else:  # a lambda, a local class, a functools.partial (whose arguments are in no name): found by no import
            inner = getattr(make, "func", make)
            name = re.sub(r"[^\w.]+", "", getattr(inner, "__qualname__", type(make).__qualname__))
            env_id = f"{getattr(inner, '__module__', 'python')}:{name}{UNNAMED}{id(make):x}"
    spec = gym.registry.get(env_id)
    if spec is None or spec.entry_point is not make:
        with warnings.catch_warnings():  # gymnasium warns when an id is registered again: here, a redefined class
            warnings.simplefilter("ignore")
            gym.register(env_id, entry_point=make)
    return env_id


def env_id_of(env: Any) -> str:
    """The id voidrl keeps for an environment given from Python: an id as it is; a ``gymnasium.Env`` class or a function
    returning one by ``python_env_id`` (voidrl makes one instance per parallel environment and seeds each); a ready
    ``gymnasium.vector.VectorEnv`` made by ``gymnasium.make_vec`` by the id of its spec (voidrl makes environments of its
    own from that id, as it must for evaluation and resume: wrappers applied to the vector env are not seen). A
    ``ValueError`` naming what was given otherwise."""
    if isinstance(env, str):
        return env
    if isinstance(env, gym.vector.VectorEnv):
        spec = env.spec
        arguments = {} if spec is None else {name: value for name, value in spec.kwargs.items() if name not in VECTOR_ARGUMENTS}
        if spec is None or arguments or spec.kwargs.get("wrappers"):
            reason = ("has no spec (it was not made by gymnasium.make_vec)" if spec is None else
                      f"was made with arguments {arguments}" if arguments else "was made with wrappers")
            raise ValueError(f"env: this {type(env).__name__} {reason}; voidrl makes environments of its own, for evaluation "
                             "and resume too: give the id, or a function that makes one environment")
        return spec_env_id(spec)
    if isinstance(env, gym.Env):
        return instance_env_id(env)
    if callable(env):
        return python_env_id(env)
    raise ValueError(f"env must be an id, a gymnasium.Env class, a function returning a gymnasium.Env or a "
                     f"gymnasium.vector.VectorEnv, got {type(env).__name__}")


def spec_env_id(spec: EnvSpec) -> str:
    """The id by which later processes make the environment of a registered ``spec``: the id itself where gymnasium or
    a suite voidrl knows registers it, else ``module:id`` (importing the module registers it)."""
    module = _entry_module(spec)
    own = module.startswith(("gymnasium.", *ENTRY_SUITES)) or spec.id in VARIANTS
    return spec.id if own else f"{module}:{spec.id}"


def instance_env_id(env: gym.Env) -> str:
    """The id of an environment instance that ``gymnasium.make`` made from a registered id with that id's own arguments,
    time limit and wrappers: voidrl makes one such per parallel environment (and again to evaluate and to resume). A
    ``ValueError`` naming the user's class, and what a copy would lose, for any other instance."""
    spec, user_class = env.spec, type(env.unwrapped).__qualname__
    if spec is None or spec.id not in gym.registry:
        raise ValueError(f"env: this {user_class} instance was not made by gymnasium.make from a registered id, so voidrl cannot "
                         f"make the one per parallel environment it needs (nor again to evaluate or resume); give the class "
                         f"{user_class}, or a function that makes one environment")
    try:
        copy = gym.make(spec.id)
    except Exception as error:  # an id that needs arguments of its own: no copy can be made from it alone
        raise ValueError(f"env: this {user_class} instance of {spec.id} cannot be copied from its id ({type(error).__name__}: "
                         f"{error}); give a function that makes one such environment") from None
    try:
        made = copy.spec
    finally:
        copy.close()
    wrappers = [wrapper.name for wrapper in spec.additional_wrappers]
    differences = [f"arguments {spec.kwargs}" if spec.kwargs != made.kwargs else "",
                   f"max_episode_steps {spec.max_episode_steps}" if spec.max_episode_steps != made.max_episode_steps else "",
                   f"wrappers {', '.join(wrappers)}" if wrappers != [wrapper.name for wrapper in made.additional_wrappers] else ""]
    differences = [difference for difference in differences if difference]
    if differences:
        raise ValueError(f"env: this {user_class} instance of {spec.id} was made with {' and '.join(differences)}, which a copy "
                         f"made from the id {spec.id!r} would not have; give a function that makes one such environment")
    return spec_env_id(spec)


def found_by_other_processes(env_id: str) -> bool:
    """Whether a process that did not make the environment can: False for an object given from Python that no import
    finds by its name (``-unnamed``) and for one defined in the script being run (``__main__:``), whose ``__main__``
    is another in a Ray actor."""
    return UNNAMED not in env_id and not env_id.startswith("__main__:")


def import_failure_place(error: Exception) -> str:
    """`` (file:line)`` of the innermost frame of ``error`` outside importlib (the user's module that raised); empty
    where there is none, and for a SyntaxError, whose message names its file and line."""
    if isinstance(error, SyntaxError):
        return ""
    frames = [frame for frame in traceback.extract_tb(error.__traceback__) if "importlib" not in frame.filename]
    return f" ({frames[-1].filename}:{frames[-1].lineno})" if frames else ""


def registered_spec(env_id: str) -> EnvSpec | None:
    """The gymnasium spec of ``env_id`` in any of the forms above (importing the module it names), or None where
    gymnasium knows no such id; an ``UnknownEnvironment`` where the id names a module that cannot be imported, or that
    has neither a registered id nor an environment of that name."""
    if env_id in gym.registry:
        return gym.registry[env_id]
    module_name, colon, name = env_id.partition(":")
    if not colon:
        return None
    if not module_name or not name:
        raise UnknownEnvironment(f"environment {env_id!r}: give MODULE:NAME, the module to import and the id it registers "
                                 f"or the environment class or function it defines; {LIST_HINT}")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise UnknownEnvironment(f"environment {env_id!r}: module {module_name!r} cannot be imported ({error})") from None
    except Exception as error:  # the user's module itself fails: say where, in one line
        raise UnknownEnvironment(f"environment {env_id!r}: importing module {module_name!r} raised "
                                 f"{type(error).__name__}: {error}{import_failure_place(error)}") from None
    if name in gym.registry:
        return gym.registry[name]
    target = module
    for part in name.split("."):
        target = getattr(target, part, None)
    if not callable(target) and module_name == "__main__":
        raise UnknownEnvironment(f"environment {env_id!r} was defined in the script that started the run, which this "
                                 "process is not; give it again from Python: voidrl.train(..., env=<the class or function>, "
                                 "resume=True), voidrl.load(path, env=...), or move it into a module and give MODULE:NAME")
    if not callable(target) and UNNAMED in name:
        raise UnknownEnvironment(f"environment {env_id!r} was given from Python as an object no import finds by its name (a "
                                 "lambda, a local class or function, a functools.partial); give it again: voidrl.load(path, env=...)")
    if not callable(target):
        raise UnknownEnvironment(f"environment {env_id!r}: importing {module_name} registered no gymnasium id {name!r}, and "
                                 f"it has no environment class or function of that name; {LIST_HINT}")
    python_env_id(target)
    return gym.registry[env_id]


def suite_of(env_id: str) -> str:
    """The suite an id belongs to (``GENERIC_SUITE`` for an environment none of the suites ships); raises
    ``UnknownEnvironment`` naming the id otherwise."""
    if env_id in VARIANTS:
        return suite_of(VARIANTS[env_id].base)
    if env_id.startswith(("MinAtar/", "MiniGrid-", "BabyAI-")):
        _register_optional_suites(env_id)
    spec = registered_spec(env_id)
    if spec is not None:
        return _entry_suite(spec)
    if rom_name(env_id) is not None:
        return "atari"
    raise UnknownEnvironment(f"unknown environment id {env_id!r}{_gymnasium_hint(env_id)}; {LIST_HINT}, give a Gymnasium id "
                             "(with 'module:' first where a module registers it), or pass an environment class or function from "
                             "Python")


def _gymnasium_hint(env_id: str) -> str:
    """Gymnasium's own word on an id it does not know, where it has one ("Please use `Taxi-v4` instead", "Did you mean:
    `CartPole`?", the versions it has), as " (gymnasium: ...)"; empty where it only says the id does not exist."""
    try:
        gym.spec(env_id)
    except gym.error.NameNotFound as error:
        return f" (gymnasium: {error})" if "Did you mean" in str(error) else ""
    except gym.error.Error as error:
        return f" (gymnasium: {error})"
    return ""


def _group_of(env_id: str, spec: EnvSpec) -> str | None:
    """Where ``voidrl envs`` lists an id: a suite, ``gymnasium/<family>`` for gymnasium's other environments, or the
    package that registered it; None for an id not listed."""
    module, suite = _entry_module(spec), _entry_suite(spec)
    if (module.startswith(UNLISTED_GYMNASIUM) or env_id in VARIANTS or ":" in env_id
            or (not isinstance(spec.entry_point, str) and module.startswith("gymnasium"))):  # gymnasium's stand-ins that only raise
        return None
    if suite in ("mujoco", "atari") and not env_id.endswith("-v5") or suite == "atari" and not env_id.startswith("ALE/"):
        return None  # older versions of the same tasks
    if suite != GENERIC_SUITE:
        return suite
    if module.startswith("gymnasium.envs."):
        return f"{GENERIC_SUITE}/{module.split('.')[2]}"
    return module.split(".")[0]


GROUP_PACKAGES = {"atari": ("ale_py", "atari"), "mujoco": ("mujoco", "mujoco"), "minatar": ("minatar", "minatar"),
                  "minigrid": ("minigrid", "minigrid"), f"{GENERIC_SUITE}/box2d": ("Box2D", "box2d")}
"""A group of ``voidrl envs`` -> the package its environments need and the extra that brings it (gymnasium registers
its MuJoCo and Box2D ids whether or not the package is installed)."""


def missing_extra(group: str) -> str | None:
    """The extra to install before the environments of ``group`` can be made, or None where none is missing."""
    package, extra = GROUP_PACKAGES.get(group, (None, None))
    return None if package is None or importlib.util.find_spec(package) is not None else extra


def check_env_packages(env_id: str) -> None:
    """A ``MissingExtra`` naming ``env_id`` and the extra that brings the package its environment needs, where gymnasium
    registers the id without it (MuJoCo's and Box2D's tasks): said before any other check of the run's options."""
    spec = gym.registry.get(VARIANTS.get(env_id, Variant(env_id)).base)
    if spec is None:
        return
    module, suite = _entry_module(spec), _entry_suite(spec)
    group = suite if suite != GENERIC_SUITE else f"{GENERIC_SUITE}/{module.split('.')[2]}" if module.startswith("gymnasium.envs.") else None
    extra = None if group is None else missing_extra(group)
    if extra is not None:
        raise MissingExtra(f'{env_id} needs {EXTRAS[extra]}: pip install "voidrl[{extra}]"')


def list_env_ids() -> dict[str, list[str]]:
    """Valid ids per suite (Atari games listed by their ALE/...-v5 id), then voidrl's variants, gymnasium's other
    environments by family and third-party ids by the package that registered them."""
    _register_optional_suites()
    ids: dict[str, list[str]] = {suite: [] for suite in SUITES if suite != GENERIC_SUITE}
    ids[NAMESPACE] = sorted(VARIANTS)
    for env_id, spec in gym.registry.items():
        group = _group_of(env_id, spec)
        if group is not None:
            ids.setdefault(group, []).append(env_id)
    if not ids["atari"]:
        with contextlib.suppress(MissingExtra):  # without ale-py, no games
            ids["atari"] = all_rom_names()
    return {group: sorted(names) for group, names in ids.items()}
