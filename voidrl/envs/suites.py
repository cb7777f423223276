"""Which environment ids there are: the suites, the task variants registered here, and the suite of an id."""

from __future__ import annotations

from dataclasses import dataclass

import gymnasium as gym

from voidrl.configs.choices import SUITES
from voidrl.envs.atari import all_rom_names, rom_name

LIST_HINT = "run `voidrl envs` to list the valid ids"


class UnknownEnvironment(ValueError):
    pass


@dataclass(frozen=True)
class Variant:
    """A registered task variant: a base id with another time limit and/or training reward."""

    base: str
    max_episode_steps: int | None = None
    fall_penalty: bool = False
    """Train on -1 per fall, 0 otherwise (reported returns stay the base task's)."""
    observed: tuple[int, ...] | None = None
    """Observation entries the agent sees (None: all)."""


VARIANTS = {
    # Leite's (2022) tasks.
    "voidrl/InvertedPendulumFall-v5": Variant("InvertedPendulum-v5", fall_penalty=True),
    "voidrl/HalfCheetah500-v5": Variant("HalfCheetah-v5", max_episode_steps=500),
    # Partially observable: cart position and pole angle only, so velocities must be inferred from history.
    "voidrl/CartPoleNoVelocity-v1": Variant("CartPole-v1", observed=(0, 2)),
}


def _register_optional_suites() -> None:
    import ale_py

    gym.register_envs(ale_py)
    try:
        import minigrid  # registers MiniGrid-* on import
    except ImportError:
        pass
    else:
        gym.register_envs(minigrid)
    try:
        from minatar.gym import register_envs
    except ImportError:
        return
    if "MinAtar/Breakout-v1" not in gym.registry:
        register_envs()


def suite_of(env_id: str) -> str:
    """The suite an id belongs to; raises ``UnknownEnvironment`` naming the id otherwise."""
    if env_id in VARIANTS:
        return suite_of(VARIANTS[env_id].base)
    if env_id.startswith(("MinAtar/", "MiniGrid-")):
        _register_optional_suites()
        if env_id in gym.registry:
            return "minatar" if env_id.startswith("MinAtar/") else "minigrid"
    elif env_id in gym.registry:
        entry = str(gym.registry[env_id].entry_point)
        if "classic_control" in entry:
            return "classic"
        if "mujoco" in entry:
            return "mujoco"
    if rom_name(env_id) is not None:
        return "atari"
    raise UnknownEnvironment(f"unknown environment id {env_id!r}; {LIST_HINT}")


def list_env_ids() -> dict[str, list[str]]:
    """Valid ids per suite (Atari games listed by their ALE/...-v5 id)."""
    _register_optional_suites()
    ids: dict[str, list[str]] = {suite: [] for suite in SUITES}
    for env_id, spec in gym.registry.items():
        entry = str(spec.entry_point)
        if "classic_control" in entry:
            ids["classic"].append(env_id)
        elif "mujoco" in entry and env_id.endswith("-v5"):
            ids["mujoco"].append(env_id)
        elif env_id.startswith("MinAtar/"):
            ids["minatar"].append(env_id)
        elif env_id.startswith("MiniGrid-"):
            ids["minigrid"].append(env_id)
        elif env_id.startswith("ALE/") and env_id.endswith("-v5"):
            ids["atari"].append(env_id)
    for env_id, variant in VARIANTS.items():
        ids[suite_of(variant.base)].append(env_id)
    if not ids["atari"]:
        ids["atari"] = all_rom_names()
    return {suite: sorted(names) for suite, names in ids.items()}
