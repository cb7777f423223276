"""A run's configuration from the options given (``make_config``): the defaults, then a preset (the one named, one read
from a file, or else the environment's default, which its suite decides), then the options. Above the configuration,
as it asks the environment's suite (``voidrl.envs.suites``, imported on first use: the command line builds its
configs here without torch or the suites' packages)."""

from __future__ import annotations

import dataclasses
from typing import Any

from voidrl.config import (ENV_PRESETS, RENAMED_PRESETS, TrainConfig, algorithm_presets, intrinsic_config_class, load_preset_file,
                           refuse_unknown_options)


def default_preset(algo: str, env_id: str) -> str | None:
    """The preset applied when none is named: per-environment defaults."""
    from voidrl.envs.suites import suite_of

    name = ENV_PRESETS.get(env_id, suite_of(env_id))
    return name if name in algorithm_presets(algo) else None


def preset_settings(algo: str, env_id: str, preset: str | None = None, preset_file: str | None = None) -> dict[str, dict[str, Any]]:
    """The preset applied beneath the options given: the one named, the one read from ``preset_file``, or else the
    environment's default one ({} where the algorithm has none)."""
    if preset is not None and preset_file is not None:
        raise ValueError("give preset or preset_file, not both")
    if preset_file is not None:
        return load_preset_file(preset_file, algo)
    preset, presets = RENAMED_PRESETS.get(preset, preset), algorithm_presets(algo)
    if preset is None:
        preset = default_preset(algo, env_id)
    elif preset not in presets:
        raise ValueError(f"unknown preset {preset!r} for {algo}; choose one of {', '.join(presets)}")
    return presets[preset] if preset is not None else {}


def make_config(algo: str, preset: str | None = None, preset_file: str | None = None, **overrides: Any) -> TrainConfig:
    """Defaults, then the preset (named, read from ``preset_file``, or the env's default), then ``overrides`` by
    field name.

    ``overrides`` may name fields of RunConfig, EnvConfig, the algorithm's config and the options of
    the reward plug-in chosen (by ``intrinsic`` or the preset); ``validate`` refuses those that cannot act on the run
    (``given_options``), where the preset's are left alone.
    """
    config = TrainConfig(algo=algo)
    if "env" in overrides:
        if not isinstance(overrides["env"], str):
            raise ValueError(f"env must be a str (an environment id), got {overrides['env']!r}")
        config.run.env = overrides["env"]
    settings = preset_settings(algo, config.run.env, preset, preset_file)
    config.run.intrinsic = overrides.get("intrinsic", settings.get("run", {}).get("intrinsic"))
    config.intrinsic_config = None if config.run.intrinsic is None else intrinsic_config_class(config.run.intrinsic)()
    sections = config.sections()
    owner = {f.name: section for section, obj in sections.items() for f in dataclasses.fields(obj)}
    refuse_unknown_options(algo, overrides, owner)
    if "intrinsic_config" in settings and config.run.intrinsic != settings["run"]["intrinsic"]:
        raise ValueError(f"the preset sets reward plug-in options; it needs intrinsic {settings['run']['intrinsic']}")
    for section, values in settings.items():
        for name, value in values.items():
            setattr(sections[section], name, value)
    for name, value in overrides.items():
        setattr(sections[owner[name]], name, value)
    if "init_temperature" not in overrides and not loads_policy_head(config):
        config.run.init_temperature = 1.0  # a preset's temperature, with no loaded policy head to act on
    config.given_options = frozenset(overrides)
    return config


def loads_policy_head(config: TrainConfig) -> bool:
    """Whether the run starts from a saved policy head (``init_from``, with ``policy_head`` among ``init_parts``)."""
    return config.run.init_from is not None and (config.run.init_parts is None or "policy_head" in config.run.init_parts)


def setting_sources(config: TrainConfig, preset: str | None, preset_file: str | None, given: set[str],
                    command_defaults: set[str] = frozenset()) -> dict[str, dict[str, str]]:
    """Where each of ``config``'s settings came from, per section and field: ``flag`` (the ``given`` options),
    ``command`` (what the command sets unless told otherwise: pretrain's reward-free APT), ``preset NAME`` or
    ``preset file PATH`` (the preset ``make_config`` applied for ``preset`` and ``preset_file``), else ``default``."""
    settings = preset_settings(config.algo, config.run.env, preset, preset_file)
    label = f"preset file {preset_file}" if preset_file is not None else \
        f"preset {RENAMED_PRESETS.get(preset, preset) or default_preset(config.algo, config.run.env)}"
    preset_fields = {name for values in settings.values() for name in values}
    sources: dict[str, dict[str, str]] = {}
    for section, values in config.sections().items():
        sources[section] = {}
        for field in dataclasses.fields(values):
            name = field.name
            sources[section][name] = ("flag" if name in given else "command" if name in command_defaults else
                                      label if name in preset_fields else "default")
    return sources
