"""Command line: ``voidrl train|pretrain|finetune|compare|tune|eval|export|envs|plot|vae|completion``.

Training options are generated from the config dataclasses, so ``--help``
shows every field with its docstring. Bad input fails before any work with one
line on stderr and exit status 2. Building the parser imports no torch: the
commands import what they run.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import errno
import functools
import gc
import importlib.util
import math
import os
import sys
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

import voidrl
from voidrl.callbacks import Callback
from voidrl.config import (COMMAND_PRESETS, RENAMED_FIELDS, RENAMED_PRESETS, RESUME_CHANGEABLE, TrainConfig, algorithm_presets, field_docs,
                           default_presets_text, plugin_options)
from voidrl.configs.choices import EXPORT_FORMATS, WEIGHTS_FORMAT
from voidrl.configs.conditions import Never, conditions_of
from voidrl.configs.env import EnvConfig
from voidrl.configs.policy import MEMORY_OPTIONS, MemoryConfig
from voidrl.configs.run import RunConfig
from voidrl.configs.tune import TuneConfig
from voidrl.configs.vae import VAEProbeConfig, VAETrainConfig
from voidrl.distributed import launched_by_torchrun
from voidrl.envs.failure import EnvironmentFailure, user_traceback
from voidrl.registry import ALGORITHMS, REWARD_SOURCES
from voidrl.schedule import Schedule, parse_schedule
from voidrl.training.presets import default_preset, make_config, setting_sources
from voidrl.training.signals import RunAborted, RunStopped, hold_stop_signals
from voidrl.validation import check_field_types, check_seed, field_type

USAGE_ERROR = 2
TORCHRUN_STOP_GRACE_S = 30
"""Seconds torchrun waits after its SIGTERM before it kills a rank."""


COMMANDS = {
    "train": "Train an agent",
    "pretrain": "Pre-train an agent without task reward (APT intrinsic reward only)",
    "finetune": "Fine-tune on the task reward, starting from a pre-trained checkpoint",
    "compare": "Fine-tune from a pre-trained checkpoint and train from scratch for several seeds; write a table and a plot",
}


class CliError(Exception):
    pass


class Parser(argparse.ArgumentParser):
    """argparse that reports a usage error as one line (no usage dump) and exits 2."""

    def error(self, message: str) -> NoReturn:
        raise CliError(f"{self.prog}: {message}")


def seed_argument(text: str) -> int:
    """argparse's ``type`` of every ``--seed``: an integer in the range where each value gives its own run."""
    try:
        seed = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    try:
        check_seed(seed, "the seed")
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return seed


def _parse_optional(base: type):
    def parse(text: str):
        return None if text.lower() == "none" else base(text)

    parse.__name__ = base.__name__
    return parse


COLLAPSE_OPTIONS = ("collapse_entropy", "collapse_patience", "collapse_restore")
"""The policy-collapse guard's options: for algorithms with a policy entropy (not ``acts_greedily``)."""


def option_flag(name: str) -> str:
    """The command-line flag of a config field: ``keep_weights`` -> ``--keep-weights``."""
    return "--" + name.replace("_", "-")


def add_dataclass_options(parser: argparse.ArgumentParser, cls: type, title: str, skip: tuple[str, ...] = (),
                          unlisted: tuple[str, ...] = (), preset: tuple[str, dict[str, Any]] = ("", {})) -> None:
    """One ``--field-name`` per field of ``cls`` but ``skip``; defaults stay unset so presets can fill them. The
    ``unlisted`` fields are left out of ``--help`` (this command refuses them, naming the ones that take them). The
    ``preset`` (``help_preset``: its name and values) shows its value as the default of each option it sets."""
    group = parser.add_argument_group(title)
    docs = field_docs(cls)
    defaults = cls()
    for field in dataclasses.fields(cls):
        if field.name in skip:
            continue
        flags = [option_flag(name) for name in (field.name, *(old for old, new in RENAMED_FIELDS.items() if new == field.name))]
        base, optional = field_type(cls, field.name)
        default = getattr(defaults, field.name)
        shown = f"{default}" if preset[1].get(field.name, default) == default else \
            f"{preset[1][field.name]}, the {preset[0]} preset's; {default} without it"
        help_text = argparse.SUPPRESS if field.name in unlisted else f"{docs.get(field.name, '')} (default: {shown})"
        common = {"dest": field.name, "default": argparse.SUPPRESS, "help": help_text}
        if base is bool:
            group.add_argument(*flags, action=argparse.BooleanOptionalAction, **common)
        elif typing.get_origin(base) is tuple:
            element = typing.get_args(base)[0]
            group.add_argument(*flags, type=element, nargs="+", metavar=element.__name__.upper(), **common)
        elif base is Schedule:
            group.add_argument(*flags, type=parse_schedule, metavar="FLOAT|lin_X", **common)
        else:
            parse = _parse_optional(base) if optional else base
            metavar = base.__name__.upper() + ("|none" if optional else "")
            group.add_argument(*flags, type=parse, metavar=metavar, **common)


def add_plugin_options(parser: argparse.ArgumentParser, listed: set[str]) -> None:
    """Each reward plug-in's options in a group of its own; an option several plug-ins share (the reward
    weights) once, in a group of its own, with each plug-in's default. ``--help`` lists those of the ``listed``
    plug-ins; the others' are still parsed, so that the run refuses them by name."""
    owners = plugin_options()
    shared = tuple(name for name, plugins in owners.items() if len(plugins) > 1)
    if shared:
        group = parser.add_argument_group(f"reward plug-ins (with --intrinsic {' or '.join(REWARD_SOURCES)})")
        for name in shared:
            sources = [REWARD_SOURCES.config_class(plugin) for plugin in owners[name]]
            defaults = ", ".join(f"{plugin} {getattr(cls(), name)}" for plugin, cls in zip(owners[name], sources))
            base, _ = field_type(sources[0], name)
            help_text = f"{field_docs(sources[0]).get(name, '')} (default: {defaults})" if listed & set(owners[name]) else argparse.SUPPRESS
            group.add_argument(option_flag(name), dest=name, type=base, metavar=base.__name__.upper(),
                               default=argparse.SUPPRESS, help=help_text)
    for plugin in REWARD_SOURCES:
        config_class = REWARD_SOURCES.config_class(plugin)
        add_dataclass_options(parser, config_class, f"{plugin} (with --intrinsic {plugin})", skip=shared,
                              unlisted=() if plugin in listed else tuple(f.name for f in dataclasses.fields(config_class)))


def flag_values(argv: list[str], flag: str) -> list[str]:
    """The values ``argv`` gives ``flag`` (``--flag VALUE`` and ``--flag=VALUE``), in order."""
    return [argv[i + 1] for i, arg in enumerate(argv[:-1]) if arg == flag] + [arg.split("=", 1)[1] for arg in argv if arg.startswith(flag + "=")]


def help_preset(argv: list[str] | None, command: str, algo: str) -> tuple[str, dict[str, Any]]:
    """For ``--help``: the name of the preset the run of ``argv`` would apply (by its ``--preset``, or its ``--env``'s,
    CartPole-v1's without one) and its values by option name, what the run uses unless a flag says otherwise; ("", {})
    where none applies or ``argv`` asks for no help."""
    from voidrl.training.presets import preset_settings

    if argv is None or not {"-h", "--help"} & set(argv):
        return "", {}
    envs, presets = flag_values(argv, "--env"), flag_values(argv, "--preset")
    options = {"env": envs[-1] if envs else "CartPole-v1"}
    try:
        preset = presets[-1] if presets else command_preset(command, algo, None, options) if command in ("pretrain", "finetune") else None
        preset = preset or default_preset(algo, options["env"])
        settings = preset_settings(algo, options["env"], preset)
    except ValueError:  # an unknown id or preset: the run says so; the help shows the plain defaults
        return "", {}
    return (preset or ""), {name: value for values in settings.values() for name, value in values.items()}


def chosen_plugins(argv: list[str] | None, command: str, algo: str) -> set[str]:
    """The reward plug-ins whose options ``--help`` lists for ``command algo`` in ``argv``: the one ``--intrinsic``
    names, else the named preset's, else pre-training's APT; every one without ``argv``."""
    if argv is None:
        return set(REWARD_SOURCES)
    for flag in ("--intrinsic", "--preset"):
        values = flag_values(argv, flag)
        if not values:
            continue
        if flag == "--intrinsic":
            return {values[-1]} & set(REWARD_SOURCES)
        preset = algorithm_presets(algo).get(values[-1], {})
        if preset.get("run", {}).get("intrinsic"):
            return {preset["run"]["intrinsic"]}
    return {"apt"} if command == "pretrain" else set()


def algorithm_commands(argv: list[str] | None) -> set[tuple[str, str]]:
    """The (command, algorithm) pairs whose options the parser of ``argv`` needs (building all 40 took about a
    second): the one ``argv`` starts with; none where ``argv`` names no algorithm, so that no algorithm's parser
    can run (``voidrl --help``, ``voidrl eval ...``), or where it starts with another command (``voidrl tune ppo``);
    every one otherwise, and without ``argv``."""
    every = {(command, name) for command in COMMANDS for name in ALGORITHMS}
    if argv is None:
        return every
    if tuple(argv[:2]) in every:
        return {tuple(argv[:2])}
    if argv and not argv[0].startswith("-") and argv[0] not in COMMANDS:
        return set()
    return every if any(arg in ALGORITHMS for arg in argv) else set()


Subcommands = argparse._SubParsersAction
"""What ``add_subparsers`` returns: each ``add_*_command`` adds its command's parser to it."""


def add_training_commands(commands: Subcommands, argv: list[str] | None) -> None:
    """The training commands (train, pretrain, finetune, compare), one parser per algorithm; only those
    ``argv`` may run get their options (``algorithm_commands``)."""
    needed = algorithm_commands(argv)
    for command, summary in COMMANDS.items():
        train = commands.add_parser(command, help=summary, description=summary + ".")
        algos = train.add_subparsers(dest="algo", metavar="ALGO", parser_class=Parser)
        algos.required = True
        for name in sorted(ALGORITHMS):
            sub = algos.add_parser(name, help=f"{command} {name}", description=f"{summary} with {name}; every option overrides its preset.")
            if (command, name) not in needed:
                continue
            config_class, presets = ALGORITHMS.config_class(name), algorithm_presets(name)
            preset_options = sub.add_mutually_exclusive_group()
            preset_options.add_argument("--preset", choices=sorted(presets) + sorted(old for old, new in RENAMED_PRESETS.items() if new in presets),
                                        metavar="{" + ",".join(sorted(presets)) + "}",
                                        help=f"named settings (voidrl.configs.{config_class.__module__.rsplit('.', 1)[-1]}); default by "
                                             f"environment: {default_presets_text(command, name)}")
            preset_options.add_argument("--preset-file", default=argparse.SUPPRESS, metavar="FILE",
                                        help="instead of --preset: a JSON or TOML file of a preset's shape, section (run, env, "
                                             "algo_config, intrinsic_config) -> option -> value, e.g. the best-preset.json "
                                             "voidrl tune writes")
            unlisted_run = (() if config_class.remote_actors else ("actors", "ray_address")) + (COLLAPSE_OPTIONS if config_class.acts_greedily else ())
            if command != "compare":
                changeable = [option_flag(name) for name in RESUME_CHANGEABLE if name not in unlisted_run]
                sub.add_argument("--resume", action="store_true",
                                 help="continue the run in --run-dir from its checkpoint with its saved settings (options given "
                                      f"again must equal them; {', '.join(changeable)} may "
                                      "change); a directory without a checkpoint starts the run (over)")
                sub.add_argument("--print-config", action="store_true",
                                 help="print the settings this command would run with, each with where it came from "
                                      "(flag, command, preset, default), and write nothing")
            if command in ("finetune", "compare"):
                sub.add_argument("--from", dest="init_from", required=command == "finetune", metavar="CHECKPOINT",
                                 help="pre-trained checkpoint to start from (parts chosen by --init-parts)")
            if command == "compare":
                sub.add_argument("--seeds", type=int, default=3, help="runs per group, seeds seed..seed+N-1 (default: 3)")
                sub.add_argument("--pretrain-steps", type=int, default=None, metavar="N",
                                 help="instead of --from: first pre-train for N steps into RUN_DIR/pretrain (reused once "
                                      "finished), with the pretrain command's defaults, then compare")
                sub.add_argument("--parallel", type=int, default=1, metavar="K",
                                 help="runs trained side by side in K worker processes, the CPUs shared between them "
                                      "(default: 1, one after the other)")
            shown_preset = help_preset(argv, command, name)
            add_dataclass_options(sub, RunConfig, "run", skip=("init_from",) if command in ("finetune", "compare") else (),
                                  unlisted=unlisted_run, preset=shown_preset)
            sub.add_argument("--quiet", dest="progress", action="store_false", default=argparse.SUPPRESS,
                             help="no progress shown, neither the bar nor the lines (as --no-progress)")
            add_dataclass_options(sub, EnvConfig, "environment", preset=shown_preset)
            feed_forward = issubclass(config_class, MemoryConfig) and not config_class.takes_memory
            never = tuple(option for option, condition in conditions_of(config_class).items() if isinstance(condition, Never))
            add_dataclass_options(sub, config_class, name, unlisted=(MEMORY_OPTIONS if feed_forward else ()) + never, preset=shown_preset)
            if not config_class.own_intrinsic_reward:
                listed = chosen_plugins(argv, command, name)
                add_plugin_options(sub, listed)
                if not listed:
                    sub.epilog = (f"Reward plug-ins ({', '.join(REWARD_SOURCES)}) add their options: "
                                  f"voidrl {command} {name} --intrinsic NAME --help lists them.")


def add_eval_command(commands: Subcommands) -> None:
    """``voidrl eval``."""
    evaluate = commands.add_parser("eval", help="evaluate a checkpoint", description="Evaluate a saved agent.")
    evaluate.add_argument("--checkpoint", required=True, help="checkpoint file (RUN_DIR/checkpoint.pt)")
    evaluate.add_argument("--episodes", type=int, default=10, help="episodes to run (default: 10)")
    evaluate.add_argument("--sampled", action="store_true",
                          help="sample actions, their draws seeded with --seed, instead of acting greedily (policy-gradient "
                               "agents; Q-network agents act greedily)")
    evaluate.add_argument("--member", default=None, metavar="J|best",
                          help="ngu and agent57: the family member j to play, or best (the one whose training episodes in "
                               "the bandits' windows paid most); default: best for agent57, 0 (beta = 0) otherwise")
    evaluate.add_argument("--num-envs", type=int, default=None, help="parallel environments (default: as trained)")
    evaluate.add_argument("--video", metavar="DIR", default=None,
                          help="write each episode as DIR/episode-NNN-return-R.mp4 (ngu and agent57: ...-member-J.mp4), one "
                               "frame per step as the environment's own renderer draws it; the episodes are then played one "
                               "after another in one environment")
    evaluate.add_argument("--seed", type=seed_argument, default=12345,
                          help="environment seed, and with --sampled the seed of the actions' draws (default: 12345)")
    evaluate.add_argument("--device", default="cpu", help="torch device (default: cpu)")
    add_play_threads_option(evaluate)


def add_play_threads_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--torch-threads", type=int, default=None, metavar="N",
                        help="torch threads for the policy's forward passes (default: torch's own count); give 1 to each of "
                             "several runs sharing the machine. The games played do not depend on it")


def play_threads(command: str, args: argparse.Namespace) -> contextlib.AbstractContextManager:
    """The thread count ``--torch-threads`` asks ``command`` to play with (torch's own count when not given)."""
    from voidrl.training.threads import check_thread_count, torch_threads

    if args.torch_threads is None:
        return contextlib.nullcontext()
    try:
        check_thread_count(args.torch_threads, "--torch-threads")
    except ValueError as error:
        raise CliError(f"voidrl {command}: {error}") from None
    return torch_threads(args.torch_threads)


def add_explore_command(commands: Subcommands) -> None:
    """``voidrl explore``."""
    explore = commands.add_parser(
        "explore", help="measure how far a policy explores an Atari game: score, episode length, coverage",
        description="Play whole games with a checkpoint's policy or a uniform-random one and measure exploration: the game "
                    "score (which a reward-free policy never saw), the episode length, and coverage: the distinct positions of "
                    "the player per game, read from the emulator's RAM (known for Ms. Pac-Man). The same --seed gives every "
                    "policy the same games' starts, and seeds the random policy's and a checkpoint's sampled actions: the "
                    "same command gives the same numbers.")
    explored = explore.add_mutually_exclusive_group(required=True)
    explored.add_argument("--checkpoint", help="checkpoint file (RUN_DIR/checkpoint.pt) whose policy plays")
    explored.add_argument("--random", metavar="ENV", help="a uniform-random policy plays this Atari game instead (e.g. ALE/MsPacman-v5)")
    explore.add_argument("--episodes", type=int, default=30, help="whole games to play (default: 30)")
    explore.add_argument("--num-envs", type=int, default=None, help="parallel games (default: the run's, 16 with --random)")
    explore.add_argument("--greedy", action="store_true",
                         help="act on the policy's most likely action (default: sample, as the policy explored in training)")
    explore.add_argument("--temperature", type=float, default=1.0,
                         help="sample from the policy's logits divided by this (below 1: nearer the greedy play; default: 1, "
                              "the policy as trained); discrete policies only")
    explore.add_argument("--seed", type=seed_argument, default=0,
                         help="game seed, and the seed of the random policy's or the checkpoint's sampled actions (default: 0)")
    explore.add_argument("--out", metavar="FILE", default=None, help="also write one CSV row per game (env, score, length, "
                                                                      "positions)")
    explore.add_argument("--device", default="cpu", help="torch device (default: cpu)")
    add_play_threads_option(explore)


def add_export_command(commands: Subcommands) -> None:
    """``voidrl export``."""
    export = commands.add_parser(
        "export", help="write a checkpoint's acting policy alone, as TorchScript or ONNX, or the weights runs start from",
        description="Write a checkpoint's acting policy alone, to run without voidrl: raw observations in (the run's observation "
                    "normalisation folded in), the greedy action and the action distribution's parameters out; a recurrent "
                    "policy's LSTM state in and out. Policy-gradient agents only. It prints the inputs and outputs. Or "
                    "(--format weights) the networks that fine-tuning loads, for finetune/compare --from.")
    export.add_argument("--checkpoint", required=True, help="checkpoint file (RUN_DIR/checkpoint.pt)")
    export.add_argument("--format", required=True, choices=(*EXPORT_FORMATS, WEIGHTS_FORMAT),
                        help="torchscript (run with torch.jit.load), onnx (run with onnxruntime; needs the export extra: "
                             "pip install -e '.[export]'), or weights: the policy's networks and an APT run's contrastive "
                             "encoder with the run's config, no optimiser, buffer or RNG state (a voidrl checkpoint for "
                             "voidrl finetune/compare --from and voidrl eval/explore; it cannot be resumed)")
    export.add_argument("--out", required=True, metavar="FILE", help="the file to write (its folders are made)")


def add_tune_command(commands: Subcommands) -> None:
    """``voidrl tune``."""
    tune = commands.add_parser(
        "tune", help="search an algorithm's hyperparameters with Optuna",
        description="Search an algorithm's hyperparameters with Optuna: TPE samples its search space on top of a preset, "
                    "each trial is an ordinary run in STUDY_DIR/trial-NNNN/ with periodic greedy evaluations, and a median "
                    "pruner stops the trials that fall behind. The study is kept in STUDY_DIR/study.db: the same command "
                    "resumes it. Writes STUDY_DIR/trials.csv and STUDY_DIR/best-preset.json (for voidrl train --preset-file).")
    tuned = sorted(name for name in ALGORITHMS if ALGORITHMS.config_class(name).search_space)
    tune.add_argument("algo", choices=sorted(ALGORITHMS), metavar="ALGO", help=f"the algorithm to tune: {', '.join(tuned)}")
    add_dataclass_options(tune, TuneConfig, "tune", skip=("algo",))


def add_envs_command(commands: Subcommands) -> None:
    """``voidrl envs`` and ``voidrl check-env``."""
    commands.add_parser("envs", help="list valid environment ids",
                        description="List valid environment ids: the suites', voidrl's variants, gymnasium's others and those "
                                    "of packages already registered, grouped by where they come from. Any id gymnasium knows "
                                    "can be trained on; 'module:Env-vN' imports module first, as gymnasium.make does.")
    check = commands.add_parser(
        "check-env", help="check that an environment can be trained on, and say what voidrl builds for it",
        description="Run gymnasium's environment checker on one environment, step two of them as a run would with random "
                    "actions (observations inside their space and finite, finite rewards, gymnasium's step signature), "
                    "and say what voidrl builds for them: the observation the agent sees, the network, and which "
                    "algorithms and reward plug-ins can act there. Exits 1 where a check fails.")
    check.add_argument("env", metavar="ID", help="an environment id, as --env takes it (e.g. FrozenLake-v1, mypkg.envs:Corridor-v0)")
    check.add_argument("--steps", type=int, default=200, help="random vector steps to take (default: 200)")
    check.add_argument("--seed", type=seed_argument, default=0, help="the environments' seed (default: 0)")


def add_vae_command(commands: Subcommands) -> None:
    """``voidrl vae train`` and ``voidrl vae probe``."""
    vae = commands.add_parser("vae", help="the VAE vision module", description="The VAE vision module (--vision vae:PATH).")
    vae_commands = vae.add_subparsers(dest="vae_command", metavar="VAE_COMMAND", parser_class=Parser)
    vae_commands.required = True
    vae_train = vae_commands.add_parser(
        "train", help="render frames of random rollouts and train a VAE on them",
        description="Render frames of a MuJoCo task from random rollouts and train a VAE on them; writes RUN_DIR/vae.pt, "
                    "losses.csv, training.png (loss and latent drift) and reconstructions.png.")
    add_dataclass_options(vae_train, VAETrainConfig, "vae train")
    vae_probe = vae_commands.add_parser(
        "probe", help="measure what a VAE's latent keeps of the body",
        description="Render new frames of a VAE's task and measure what it keeps: a linear probe's held-out R^2 from the "
                    "latent to the joint positions (beside an untrained VAE's), and the reconstruction error on the body's "
                    "pixels (beside drawing the background there) and elsewhere.")
    add_dataclass_options(vae_probe, VAEProbeConfig, "vae probe")


def add_plot_command(commands: Subcommands) -> None:
    """``voidrl plot``."""
    plot = commands.add_parser("plot", help="plot learning curves and best scores of runs",
                               description="Plot mean learning curves with 95% t-intervals over the runs of each group "
                                           "(training and evaluation return) and a violin plot of each run's best score.")
    plot.add_argument("run_dirs", nargs="+", metavar="RUN_DIR", help="run directories (episodes.csv; evaluations.csv with --eval-every)")
    plot.add_argument("--out", default="plot", metavar="FILE_PREFIX",
                      help="write FILE_PREFIX-curves.png and FILE_PREFIX-best.png (default: plot)")
    plot.add_argument("--label", action="append", default=[], metavar="NAME=GLOB",
                      help="put the runs whose path matches GLOB in group NAME (repeatable; the first match wins); other runs "
                           "are grouped by algorithm and environment from their config.json; --label all='*' makes one group")
    plot.add_argument("--table", type=int, metavar="STEPS",
                      help="also write FILE_PREFIX-table.md and FILE_PREFIX-table.png: final return, AUC and early returns "
                           "of each group over a budget of STEPS with 95%% intervals, as voidrl compare does; with two "
                           "groups, the first minus the second and the verdict")


COMPLETION_SHELLS = ("bash", "zsh")


def add_completion_command(commands: Subcommands) -> None:
    """``voidrl completion``."""
    completion = commands.add_parser(
        "completion", help="print a shell completion script for voidrl",
        description="Print a completion script for the shell named (made by shtab from this command line): every command, "
                    "algorithm, option and choice. Write it to a file your shell loads: "
                    "~/.local/share/bash-completion/completions/voidrl (bash), or _voidrl in a folder of zsh's fpath.")
    completion.add_argument("shell", choices=COMPLETION_SHELLS, help="the shell to complete in")


def build_parser(argv: list[str] | None = None) -> Parser:
    """The whole command line; given the ``argv`` to parse, only the training commands it may run get their options
    (``algorithm_commands``)."""
    parser = Parser(prog="voidrl", description="Policy-optimisation RL with reward-free pre-training.")
    parser.add_argument("--version", action="version", version=f"voidrl {voidrl.__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    commands.required = True
    add_training_commands(commands, argv)
    add_eval_command(commands)
    add_explore_command(commands)
    add_export_command(commands)
    add_tune_command(commands)
    add_envs_command(commands)
    add_vae_command(commands)
    add_plot_command(commands)
    add_completion_command(commands)
    return parser


def command_train(args: argparse.Namespace, callbacks: Sequence[Callback] = ()) -> int:
    from voidrl import collective
    from voidrl.io.checkpoint import load_run_checkpoint
    from voidrl.training.agent import summarize
    from voidrl.training.allocator import pin_allocator_thresholds
    from voidrl.io.run_dir import RunDirError
    from voidrl.training.loop import check_parts
    from voidrl.training.runs import make_trainer, resume_config

    pin_allocator_thresholds()  # this process is ours: the library itself leaves the allocator alone
    if launched_by_torchrun():
        if args.command == "compare":
            raise CliError("voidrl compare: launch one process; each of its runs trains in one process (torchrun runs "
                           "train, pretrain and finetune)")
        collective.init_from_environment()
    else:  # a torchrun rank once aborted at exit (terminate called without an active exception) with the freeze: not there
        ALGORITHMS[args.algo]  # imported now, so that the freeze below covers its modules
        gc.freeze()  # the imports' objects leave the collector's view: each full collection no longer walks torch's modules

    options = {k: tuple(v) if isinstance(v, list) else v for k, v in vars(args).items()
               if k not in ("command", "algo", "resume", "seeds", "pretrain_steps", "parallel", "print_config")
               and not (k == "init_from" and v is None)}
    given = set(options) - {"preset", "preset_file"}
    resume = getattr(args, "resume", False)
    with usage_errors():
        config = resume_config(args.algo, options) if resume else None
        if config is None:
            preset = options.pop("preset", None)
            if args.command == "pretrain":
                preset, options = pretrain_defaults(args.algo, preset, options)
            source = load_run_checkpoint(options["init_from"]) if "init_from" in options else None  # loaded once, here
            if source is not None and "env" not in options:
                options["env"] = source["config"]["run"]["env"]  # the pre-trained run's
            if args.command == "finetune":
                preset = command_preset("finetune", args.algo, preset, options)
            if args.command == "compare":
                plan = plan_comparison(args, preset, options, source)
            else:
                config = make_config(args.algo, preset, **options)
                if getattr(args, "print_config", False):
                    check_parts(config)  # refused as the run would be
                    sources = setting_sources(config, preset, options.get("preset_file"), given, set(options) - given)
                    if source is not None and "env" not in given:
                        sources["run"]["env"] = "the --from checkpoint"
                    print_settings(args, config, sources)
                    return 0
        if args.command != "compare":
            trainer = make_trainer(config, resume=resume, init_checkpoint=None if resume else source)
    if args.command == "compare":
        return run_comparison(*plan)
    with usage_errors(RunDirError):  # another process took the directory since it was checked
        agent = trainer.train(callbacks)
    if not collective.is_main_process():
        return 0
    run_dir = config.run_dir
    returns = _last_returns(f"{run_dir}/episodes.csv", 20)
    if returns:
        mean, std = summarize(returns)
        print(f"final score: mean return {mean:.1f} +- {std:.1f} over the last {len(returns)} training episodes")
    print(f"steps: {agent.step}; logs: {run_dir}/ (episodes.csv, metrics.csv, tensorboard/); checkpoint: {run_dir}/checkpoint.pt")
    return 0


def plan_comparison(args: argparse.Namespace, preset: str | None, options: dict[str, Any], source: dict[str, Any] | None):
    """The pre-training run (or None) and every run of the comparison, each checked and built once on trial
    (``source``: the loaded ``--from`` checkpoint)."""
    from voidrl.training.compare import comparison_runs, preflight

    if args.seeds < 1:
        raise ValueError(f"--seeds must be a positive integer, got {args.seeds}")
    check_seed(options.get("seed", 0) + args.seeds - 1, "the last seed (--seed + --seeds - 1)")
    if args.parallel < 1:
        raise ValueError(f"--parallel must be a positive integer, got {args.parallel}")
    pretrain_config = compare_pretrain_config(args, preset, options)
    if pretrain_config is not None:
        options = {**options, "init_from": f"{pretrain_config.run_dir}/checkpoint.pt"}
    if options.get("intrinsic") is None:  # plug-in options given for the pre-training only
        options = {name: value for name, value in options.items() if name not in plugin_options()}
    base = make_config(args.algo, preset, **options)
    runs = comparison_runs(base, args.seeds)
    preflight(([] if pretrain_config is None else [pretrain_config]) + runs[:2], source)  # the others differ by seed only
    return pretrain_config, base, runs, args.parallel


def run_comparison(pretrain_config: TrainConfig | None, base: TrainConfig, runs, parallel: int) -> int:
    from voidrl.training.compare import compare, run_to_completion

    if pretrain_config is not None:
        run_to_completion(pretrain_config)
    print(compare(base, runs, parallel))
    print(f"table: {base.run_dir}/comparison.md; plot: {base.run_dir}/comparison.png")
    return 0


def pretrain_defaults(algo: str, preset: str | None, options: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
    """Reward-free APT unless the user says otherwise; the suite's pre-training preset unless one is named."""
    options = {"intrinsic": "apt", "extrinsic_coef": 0.0, **options}
    return command_preset("pretrain", algo, preset, options), options


def print_settings(args: argparse.Namespace, config: TrainConfig, sources: dict[str, dict[str, str]]) -> None:
    """Every setting of ``config`` by section, as ``name = value`` and where it came from (``setting_sources``)."""
    print(f"voidrl {args.command} {args.algo}: the settings of this run (nothing written)")
    for section, values in config.sections().items():
        print(f"[{section}]")
        rows = [(f"{name} = {getattr(values, name)!r}", source) for name, source in sources[section].items()]
        width = max(len(text) for text, _ in rows)
        for text, source in rows:
            print(f"  {text.ljust(width)}  # {source}")


def command_preset(command: str, algo: str, preset: str | None, options: dict[str, Any]) -> str | None:
    """The preset named, or else ``command``'s own for the environment's suite (``COMMAND_PRESETS``) where the
    algorithm has it; None leaves the environment's default to ``make_config``."""
    from voidrl.envs.suites import suite_of

    suite_preset = COMMAND_PRESETS[command].get(suite_of(options.get("env", "CartPole-v1")))
    if preset is None and "preset_file" not in options and suite_preset in algorithm_presets(algo):
        return suite_preset
    return preset


def compare_pretrain_config(args: argparse.Namespace, preset: str | None, options: dict[str, Any]) -> TrainConfig | None:
    """For ``compare --pretrain-steps N``: the pre-training run (run before the comparison)."""
    if ("init_from" in options) == (args.pretrain_steps is not None):
        raise ValueError("compare needs exactly one of --from CHECKPOINT and --pretrain-steps N")
    if args.pretrain_steps is None:
        return None
    if args.pretrain_steps < 1:
        raise ValueError(f"--pretrain-steps must be a positive integer, got {args.pretrain_steps}")
    if "run_dir" not in options:
        raise ValueError("compare --pretrain-steps needs --run-dir (the pre-trained run goes to RUN_DIR/pretrain)")
    finetune_only = ("init_from", "init_parts", "init_temperature", "steps", "run_dir")
    pretrain_preset, pretrain_options = pretrain_defaults(
        args.algo, None if RENAMED_PRESETS.get(preset, preset) == "atari" else preset, {k: v for k, v in options.items() if k not in finetune_only})
    config = make_config(args.algo, pretrain_preset, steps=args.pretrain_steps,
                         run_dir=f"{options['run_dir']}/pretrain", **pretrain_options)
    return config  # checked with the comparison's runs by preflight


def _last_returns(path: str, count: int) -> list[float]:
    import csv

    with open(path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    return [float(row["return"]) for row in rows[-count:]]


def command_eval(args: argparse.Namespace) -> int:
    from voidrl.io.run_dir import check_writable_dir
    from voidrl.io.video import EpisodeFiles, check_video_packages
    from voidrl.training.agent import Agent, resolve_device, summarize

    if args.episodes < 1:
        raise CliError(f"voidrl eval: --episodes must be a positive integer, got {args.episodes}")
    if args.num_envs is not None and args.num_envs < 1:
        raise CliError(f"voidrl eval: --num-envs must be a positive integer, got {args.num_envs}")
    if args.video is not None and args.num_envs not in (None, 1):
        raise CliError(f"voidrl eval: --video plays the episodes in one environment; give --num-envs 1 or leave it out, got {args.num_envs}")
    threads = play_threads("eval", args)
    with usage_errors():
        if args.video is not None:
            check_video_packages("--video", mp4=True)
            check_writable_dir(args.video, "--video")
        agent = Agent.load(args.checkpoint, resolve_device(args.device).type)
        member = agent.evaluation_member(args.member)
        agent.check_evaluation(not args.sampled, member)
        if args.video is not None:
            agent.make_env(1, screens=True).close()  # an environment that cannot render here says so now
    recorder = None if args.video is None else EpisodeFiles(args.video, member)
    with threads:
        returns = agent.evaluate(args.episodes, deterministic=not args.sampled, num_envs=args.num_envs, seed=args.seed, member=member,
                                 recorder=recorder)
    mean, std = summarize(returns)
    mode = "sampled actions" if args.sampled else "greedy actions"
    if member is not None:
        mode += " of " + ALGORITHMS[agent.config.algo].describe_member(agent.policy, member)
    print(f"{agent.config.run.env}: mean return {mean:.2f} +- {std:.2f} over {len(returns)} episodes ({mode})")
    for path in [] if recorder is None else recorder.paths:
        print(path)
    return 0


def command_explore(args: argparse.Namespace) -> int:
    from voidrl.io.run_dir import check_writable_dir
    from voidrl.nets.parts import rescale_policy_logits
    from voidrl.training.agent import Agent, resolve_device
    from voidrl.training.exploration import check_atari, explore_agent, explore_random, summarize_exploration, write_exploration

    for name in ("episodes", "num_envs"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise CliError(f"voidrl explore: --{name.replace('_', '-')} must be a positive integer, got {value}")
    if not (math.isfinite(args.temperature) and args.temperature > 0):
        raise CliError(f"voidrl explore: --temperature must be a positive number, got {args.temperature}")
    if args.temperature != 1.0 and (args.greedy or args.random is not None):
        raise CliError("voidrl explore: --temperature changes a checkpoint's sampled actions; "
                       f"{'--greedy play' if args.greedy else 'a uniform-random policy'} is the same at any temperature")
    threads = play_threads("explore", args)
    out = None if args.out is None else Path(args.out)
    with usage_errors():
        if out is not None:
            if out.is_dir():
                raise ValueError(f"--out {args.out!r} is a directory; give the CSV file to write")
            check_writable_dir(out.parent, "--out's folder")
        if args.random is not None:
            from voidrl.envs.suites import suite_of

            suite_of(args.random)
            check_atari(args.random)
            agent = None
        else:
            agent = Agent.load(args.checkpoint, resolve_device(args.device).type)
            check_atari(agent.config.run.env)
            rescale_policy_logits(agent.policy, args.temperature)
    if agent is None:
        env_id, policy = args.random, "uniform-random actions"
        results = explore_random(args.random, args.episodes, args.num_envs or 16, args.seed)
    else:
        sampled = "sampled" if args.temperature == 1.0 else f"sampled (temperature {args.temperature:g})"
        env_id, policy = agent.config.run.env, f"{'greedy' if args.greedy else sampled} actions of {args.checkpoint}"
        with threads:
            results = explore_agent(agent, args.episodes, args.num_envs, args.seed, args.greedy)
    summary = summarize_exploration(results)
    print(f"{env_id}, {policy}, {len(results)} games from seed {args.seed} (mean +- standard error):")
    for name, label in (("score", "score"), ("length", "episode length (steps)"), ("positions", "distinct positions")):
        if name in summary:
            print(f"  {label}: {summary[name]:.1f} +- {summary[name + '_sem']:.1f}")
    if out is not None:
        write_exploration(out, results)
        print(out)
    return 0


def command_export(args: argparse.Namespace) -> int:
    from voidrl.io.checkpoint import load_run_checkpoint, save_checkpoint
    from voidrl.training.export import export_policy
    from voidrl.io.run_dir import check_writable_dir
    from voidrl.nets.parts import fine_tuning_weights
    from voidrl.training.agent import Agent

    out = Path(args.out)
    if out.is_dir():
        raise CliError(f"voidrl export: --out {args.out!r} is a directory; give the file to write")
    if out.exists() and Path(args.checkpoint).exists() and out.samefile(args.checkpoint):
        raise CliError(f"voidrl export: --out {args.out!r} is the checkpoint it reads; give another file")
    with usage_errors():
        check_writable_dir(out.parent, "--out's folder")
        agent = Agent.load(args.checkpoint)  # a checkpoint that cannot act is refused for every format
        if args.format == WEIGHTS_FORMAT:
            save_checkpoint(out, fine_tuning_weights(load_run_checkpoint(args.checkpoint)))
            print(f"{out} (weights of a {agent.config.algo} run on {agent.config.run.env} at step {agent.step}; "
                  f"start a run from it with --from {out})")
            return 0
        signature = export_policy(agent, out, args.format)
    print(f"{out} ({args.format}): {signature}")
    return 0


def command_plot(args: argparse.Namespace) -> int:
    from voidrl.io.report import compare_runs, group_runs, plot_runs, read_episodes, run_csv_file
    from voidrl.io.run_dir import check_writable_dir

    labels = []
    for label in args.label:
        name, _, pattern = label.partition("=")
        if not name or not pattern:
            raise CliError(f"voidrl plot: --label must look like NAME=GLOB, got {label!r}")
        labels.append((name, pattern))
    run_dirs = [Path(run_dir) for run_dir in args.run_dirs]
    seen: dict[Path, str] = {}
    for given, run_dir in zip(args.run_dirs, run_dirs):
        if not run_dir.is_dir():
            raise CliError(f"voidrl plot: run directory {str(run_dir)!r} does not exist")
        if run_dir.resolve() in seen:
            raise CliError(f"voidrl plot: run directory {given!r} is given twice (also as {seen[run_dir.resolve()]!r}); "
                           "each run counts once")
        seen[run_dir.resolve()] = given
        if run_csv_file(run_dir, "episodes.csv") is None:
            raise CliError(f"voidrl plot: {str(run_dir / 'episodes.csv')!r} does not exist, nor a gzipped copy (not a run directory?)")
    if args.table is not None and args.table < 1:
        raise CliError(f"voidrl plot: --table must be a positive number of steps, got {args.table}")
    with usage_errors():
        check_writable_dir(Path(args.out).parent, "--out's folder")
        groups = group_runs(run_dirs, labels)
        short = []  # runs whose last episode ends before the table's budget
        for run_dir in run_dirs if args.table is not None else []:
            steps = read_episodes(run_dir)[0]
            if not steps.size or steps[-1] < args.table:
                short.append((run_dir, int(steps[-1]) if steps.size else 0))
        paths = plot_runs(groups, Path(args.out))
        if args.table is not None:
            table = compare_runs(groups, args.table, Path(f"{args.out}-table"))
    if short:
        print(f"voidrl plot: warning: {len(short)} of {len(run_dirs)} runs end before --table's budget of {args.table:,} steps "
              f"(the first: {str(short[0][0])!r}, its last episode at step {short[0][1]:,}); past their end their measures "
              "repeat their last episodes", file=sys.stderr)
    for path in paths:
        print(path)
    if args.table is not None:
        print(f"{args.out}-table.md")
        print(f"{args.out}-table.png")
        print(table)
    return 0


def command_vae(args: argparse.Namespace) -> int:
    from voidrl.io.run_dir import check_writable_dir
    from voidrl.nets.vae import load_vae
    from voidrl.training.vae import check_vae_training, load_frame_policy, probe_vae, train_vae

    options = {name: value for name, value in vars(args).items() if name not in ("command", "vae_command")}
    with usage_errors():
        config = (VAETrainConfig if args.vae_command == "train" else VAEProbeConfig)(**options)
        check_field_types(config)
        if args.vae_command == "train":
            check_vae_training(config)
        else:
            config.validate()
        env_id = load_vae(config.vision)[1] if args.vae_command == "probe" else config.env  # a bad file: a usage error, now
        if config.policy is not None:
            load_frame_policy(config.policy, env_id)
        if args.vae_command == "probe" and config.out:  # written after minutes of work: checked now
            out = Path(config.out)
            if out.is_dir():
                raise ValueError(f"--out {config.out!r} is a directory; give the JSON file to write")
            check_writable_dir(out.parent, "--out's folder")
    (train_vae if args.vae_command == "train" else probe_vae)(config)
    return 0


def command_tune(args: argparse.Namespace) -> int:
    if importlib.util.find_spec("optuna") is None:
        raise CliError("voidrl tune needs the optuna package: install voidrl's tune extra (pip install -e '.[tune]')")
    from voidrl.training.tune import TrialFailed, Tuner

    with usage_errors():
        config = TuneConfig(**{name: value for name, value in vars(args).items() if name != "command"})
        check_field_types(config)
        tuner = Tuner(config)
    try:
        print(tuner.run())
    except TrialFailed as error:
        print(f"voidrl tune: {error}", file=sys.stderr)
        return 1
    return 0


def command_completion(args: argparse.Namespace) -> int:
    import shtab

    print(shtab.complete(build_parser(), args.shell))  # every algorithm's options: a parser built for no argv
    return 0


def command_check_env(args: argparse.Namespace) -> int:
    from voidrl.training.check import check_environment

    if args.steps < 1:
        raise CliError(f"voidrl check-env: --steps must be a positive integer, got {args.steps}")
    with usage_errors():
        report = check_environment(args.env, args.steps, args.seed)
    print("\n".join(report.lines))
    return 0 if report.passed else 1


def command_envs(_: argparse.Namespace) -> int:
    from voidrl.envs.suites import list_env_ids, missing_extra

    for group, ids in list_env_ids().items():
        extra = missing_extra(group)
        missing = f'(not installed: pip install "voidrl[{extra}]")' if extra else ""
        print(f"{group}: {' '.join([missing, *ids]).strip()}")
    return 0


@contextlib.contextmanager
def usage_errors(*kinds: type[Exception]):
    """Turn the ``ValueError`` of input checks (bad option, env id, run dir, checkpoint), or only the ``kinds`` given,
    into a ``CliError``."""
    try:
        yield
    except kinds or ValueError as error:
        raise CliError(f"voidrl: error: {error}") from None


def main(argv: list[str] | None = None, callbacks: Sequence[Callback] = ()) -> int:
    """The ``voidrl`` command line ``argv`` (default ``sys.argv[1:]``) run in this process; its exit status. A training
    command's run calls ``callbacks`` (``voidrl.callbacks``); the other commands refuse them."""
    argv = sys.argv[1:] if argv is None else argv
    if launched_by_torchrun():
        hold_stop_signals(give_up_after=TORCHRUN_STOP_GRACE_S - 5, say=held_up_in_the_group)
    parser = build_parser(argv)
    try:
        args = parser.parse_args(argv)
        handler = {"eval": command_eval, "explore": command_explore, "export": command_export, "envs": command_envs, "check-env": command_check_env, "plot": command_plot, "tune": command_tune,
                   "vae": command_vae, "completion": command_completion}.get(args.command)
        if callbacks and (handler is not None or args.command == "compare"):
            raise ValueError(f"callbacks are for a command that trains one run (train, pretrain, finetune), not {args.command}")
        handler = handler or functools.partial(command_train, callbacks=callbacks)
        from voidrl import collective

        try:
            status = handler(args)
            # ranks tear the group down together: a rank whose peer had already left now and then aborted in gloo's
            # teardown (std::terminate at exit) after a finished run
            collective.barrier()
            return status
        except (RunAborted, EnvironmentFailure) as aborted:
            if aborted.__cause__ is not None:
                print(user_traceback(aborted.__cause__), end="", file=sys.stderr)
            print(f"voidrl: {aborted}", file=sys.stderr)
            return 1
        except collective.GroupFailed:  # said where it happened
            return 1
        except OSError as error:
            if error.errno != errno.ENOSPC:
                raise
            # write_atomically's own words say which disk, what is kept and what to do; another writer's name the file
            print(f"voidrl: {error.strerror}" + (f": {error.filename}" if error.filename else ""), file=sys.stderr)
            return 1
        except RuntimeError as error:
            if not collective.is_group_failure(error):
                raise
            collective.report_group_failure(error)
            return 1
        finally:
            collective.destroy()
    except CliError as error:
        if os.environ.get("RANK", "0") == "0":  # under torchrun every rank refuses alike: rank 0 says it once
            print(error, file=sys.stderr)
        return USAGE_ERROR
    except RunStopped as stopped:  # the run has said where it stopped and how to go on
        return stopped.exit_status
    except KeyboardInterrupt:
        print("voidrl: interrupted", file=sys.stderr)
        return 130


def held_up_in_the_group(seconds: float) -> None:
    """What a torchrun rank says when it ends itself, still held up ``seconds`` after torchrun's stop signal."""
    print(f"voidrl: rank {os.environ.get('RANK', '0')}: still waiting on the data-parallel group {seconds:.0f} s after torchrun's "
          "stop signal: another process of the data-parallel group failed or stopped answering; torchrun's report names it; "
          "continue from the last checkpoint with --resume", file=sys.stderr, flush=True)


def run() -> None:
    """The ``voidrl`` command: ``main``, then exit with its status. After a run on Ray or under torchrun the process
    ends without the interpreter's teardown, where threads of those engines can still run: Ray's, still stopping when
    a signal cut its start short, crashed it (SIGSEGV after the stop checkpoint was written), and gloo's worker
    threads, still holding work with tensors when the interpreter is torn down, abort it ("terminate called without an
    active exception"; pytorch/pytorch#190489, #179291) now and then, mostly after a peer rank died. Every file of the
    run is closed by then. Output piped to a reader that stops early (``voidrl envs | head``) ends it quietly, as
    Unix tools do."""
    try:
        status = main()
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the interpreter's last flush would raise again
        status = 141  # 128 + SIGPIPE, what a shell reports for a tool cut off by its reader
    exit_process(status)


def exit_process(status: int) -> NoReturn:
    """End this process with ``status``; after a run on Ray or under torchrun without the interpreter's teardown
    (``run``)."""
    if "ray" in sys.modules or launched_by_torchrun():
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    sys.exit(status)


if __name__ == "__main__":
    run()
