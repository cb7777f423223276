"""A run's trainer: the one-process loop, or the same loop fed by Ray actors (``--actors N``); the config a resumed
run continues with."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from voidrl.callbacks import Callback
from voidrl.config import RESUME_CHANGEABLE, TrainConfig, refuse_unknown_options
from voidrl.schedule import stored_schedule
from voidrl.io.checkpoint import load_checkpoint
from voidrl.training.agent import Agent
from voidrl.training.loop import CHECKPOINT_NAME, Trainer
from voidrl.training.presets import preset_settings


def make_trainer(config: TrainConfig, resume: bool = False, init_checkpoint: dict[str, Any] | None = None) -> Trainer:
    """The run's trainer: this process's loop, or the Ray engine's with ``config.run.actors`` > 0."""
    if config.run.actors:
        from voidrl.training.ray_loop import DistributedTrainer

        return DistributedTrainer(config, resume, init_checkpoint)
    return Trainer(config, resume, init_checkpoint)


def train_from_config(config: TrainConfig, resume: bool = False, callbacks: Sequence[Callback] = ()) -> Agent:
    """Train as ``config`` says, calling ``callbacks`` (``voidrl.callbacks``) after each update; with ``resume``,
    continue from ``run_dir/checkpoint.pt`` (or start over without one)."""
    return make_trainer(config, resume).train(callbacks)


def resume_config(algo: str, options: dict[str, Any]) -> TrainConfig | None:
    """The stored config of the run in ``options["run_dir"]`` (its checkpoint's, else its config.json's), with the
    changeable options (``RESUME_CHANGEABLE``) of ``options`` applied; None when the directory holds no run yet.

    Options given again with their stored values are accepted (the original command with ``--resume`` appended, the
    original call with ``resume=True``); any real change of another option is refused, naming old and new values.
    """
    run_dir = options.get("run_dir")
    if run_dir is None:
        raise ValueError("resume (--resume) needs run_dir, the directory of the run to continue")
    checkpoint, stored_json = Path(run_dir) / CHECKPOINT_NAME, Path(run_dir) / "config.json"
    if checkpoint.is_file():
        stored = load_checkpoint(checkpoint)["config"]
    elif stored_json.is_file():
        try:
            stored = json.loads(stored_json.read_text())
        except json.JSONDecodeError as error:
            raise ValueError(f"{str(stored_json)!r} is not valid JSON ({error})") from None
    else:
        return None
    if stored["algo"] != algo:
        raise ValueError(f"resume: {run_dir!r} holds a {stored['algo']} run, not {algo}")
    config = TrainConfig.from_dict(stored)
    config.run.run_dir = run_dir
    given = dict(options)
    preset, preset_file = given.pop("preset", None), given.pop("preset_file", None)
    if preset is not None or preset_file is not None:
        for values in preset_settings(algo, config.run.env, preset, preset_file).values():
            given = {**values, **given}
    owner = {f.name: section for section in config.sections().values() for f in dataclasses.fields(section)}
    refuse_unknown_options(algo, given, owner)
    for name, value in given.items():  # a schedule stored by its function's name takes the function given again
        if callable(value) and stored_schedule(value) == getattr(owner[name], name):
            setattr(owner[name], name, value)
    changes = [f"{name} {getattr(owner[name], name)!r} -> {value!r}"
               for name, value in given.items()
               if name not in RESUME_CHANGEABLE and getattr(owner[name], name) != value]
    if changes:
        raise ValueError(f"resume continues the run in {run_dir!r} with its own settings; these differ from it: "
                         f"{', '.join(changes)} (only {', '.join(RESUME_CHANGEABLE)} may change)")
    for name in RESUME_CHANGEABLE:
        if name in given:
            setattr(owner[name], name, given[name])
    return config
