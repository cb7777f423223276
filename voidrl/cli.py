"""Command line: ``voidrl train|eval|envs|plot``.

Training options are generated from the config dataclasses, so ``--help``
shows every field with its docstring. Bad input fails before any work with one
line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import sys
import typing
from typing import Any, NoReturn

from voidrl.algos import ALGORITHMS
from voidrl.config import PRESETS, RunConfig, TrainConfig, field_docs, field_type, make_config
from voidrl.envs.factory import EnvConfig, list_env_ids, suite_of
from voidrl.intrinsic.apt import APTConfig

USAGE_ERROR = 2


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


def _parse_optional(base: type):
    def parse(text: str):
        return None if text.lower() == "none" else base(text)

    parse.__name__ = base.__name__
    return parse


def add_dataclass_options(parser: argparse.ArgumentParser, cls: type, title: str, skip: tuple[str, ...] = ()) -> None:
    """One ``--field-name`` per field of ``cls``; defaults stay unset so presets can fill them."""
    group = parser.add_argument_group(title)
    docs = field_docs(cls)
    defaults = cls()
    for field in dataclasses.fields(cls):
        if field.name in skip:
            continue
        flag = "--" + field.name.replace("_", "-")
        base, optional = field_type(cls, field.name)
        default = getattr(defaults, field.name)
        help_text = f"{docs.get(field.name, '')} (default: {default})"
        common = {"dest": field.name, "default": argparse.SUPPRESS, "help": help_text}
        if base is bool:
            group.add_argument(flag, action=argparse.BooleanOptionalAction, **common)
        elif typing.get_origin(base) is tuple:
            element = typing.get_args(base)[0]
            group.add_argument(flag, type=element, nargs="+", metavar=element.__name__.upper(), **common)
        else:
            parse = _parse_optional(base) if optional else base
            metavar = base.__name__.upper() + ("|none" if optional else "")
            group.add_argument(flag, type=parse, metavar=metavar, **common)


def build_parser() -> Parser:
    parser = Parser(prog="voidrl", description="Policy-optimisation RL with reward-free pre-training.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    commands.required = True

    for command, summary in COMMANDS.items():
        train = commands.add_parser(command, help=summary, description=summary + ".")
        algos = train.add_subparsers(dest="algo", metavar="ALGO", parser_class=Parser)
        algos.required = True
        for name, algo in sorted(ALGORITHMS.items()):
            sub = algos.add_parser(name, help=f"{command} {name}", description=f"{summary} with {name}; every option overrides its preset.")
            sub.add_argument("--preset", choices=sorted(PRESETS.get(name, {})),
                             help="named settings; default: the environment's own (cartpole, atari, minatar, mujoco, pendulum for a2c on voidrl/InvertedPendulumFall-v5; "
                                  "ppg on Atari: thesis, or thesis-pretrain for pretrain)")
            sub.add_argument("--resume", action="store_true",
                             help="continue the run in --run-dir from its checkpoint (its saved config is used; --steps and --device may change)")
            if command in ("finetune", "compare"):
                sub.add_argument("--from", dest="init_from", required=command == "finetune", metavar="CHECKPOINT",
                                 help="pre-trained checkpoint to start from (parts chosen by --init-parts)")
            if command == "compare":
                sub.add_argument("--seeds", type=int, default=3, help="runs per group, seeds seed..seed+N-1 (default: 3)")
                sub.add_argument("--pretrain-steps", type=int, default=None, metavar="N",
                                 help="instead of --from: first pre-train for N steps into RUN_DIR/pretrain (reused once "
                                      "finished), with the pretrain command's defaults, then compare")
            add_dataclass_options(sub, RunConfig, "run", skip=("init_from",) if command in ("finetune", "compare") else ())
            add_dataclass_options(sub, EnvConfig, "environment")
            add_dataclass_options(sub, algo.config_class, name)
            add_dataclass_options(sub, APTConfig, "apt (with --intrinsic apt)")

    evaluate = commands.add_parser("eval", help="evaluate a checkpoint", description="Evaluate a saved agent.")
    evaluate.add_argument("--checkpoint", required=True, help="checkpoint file (RUN_DIR/checkpoint.pt)")
    evaluate.add_argument("--episodes", type=int, default=10, help="episodes to run (default: 10)")
    evaluate.add_argument("--sampled", action="store_true", help="sample actions instead of acting greedily")
    evaluate.add_argument("--num-envs", type=int, default=None, help="parallel environments (default: as trained)")
    evaluate.add_argument("--seed", type=int, default=12345, help="environment seed (default: 12345)")
    evaluate.add_argument("--device", default="cpu", help="torch device (default: cpu)")

    commands.add_parser("envs", help="list valid environment ids", description="List valid environment ids.")

    plot = commands.add_parser("plot", help="plot learning curves and best scores of runs",
                               description="Plot mean learning curves with 95% t-intervals over the runs of each group "
                                           "(training and evaluation return) and a violin plot of each run's best score.")
    plot.add_argument("run_dirs", nargs="+", metavar="RUN_DIR", help="run directories (episodes.csv; evaluations.csv with --eval-every)")
    plot.add_argument("--out", default="plot", metavar="FILE_PREFIX",
                      help="write FILE_PREFIX-curves.png and FILE_PREFIX-best.png (default: plot)")
    plot.add_argument("--label", action="append", default=[], metavar="NAME=GLOB",
                      help="put the runs whose path matches GLOB in group NAME (repeatable; the first match wins); other runs "
                           "are grouped by algorithm and environment from their config.json; --label all='*' makes one group")
    return parser


def resume_config(args: dict[str, Any]) -> TrainConfig:
    """The checkpointed run's config, with only --steps and --device allowed to change."""
    from voidrl.io.checkpoint import load_checkpoint
    from voidrl.train.loop import CHECKPOINT_NAME

    run_dir = args.pop("run_dir", None)
    if run_dir is None:
        raise CliError("voidrl train: --resume needs --run-dir")
    changeable = {name: args.pop(name) for name in ("steps", "device", "progress") if name in args}
    args.pop("preset", None)
    if args:
        flags = ", ".join("--" + name.replace("_", "-") for name in sorted(args))
        raise CliError(f"voidrl train: {flags} cannot change on --resume (only --steps and --device can)")
    payload = load_checkpoint(f"{run_dir}/{CHECKPOINT_NAME}")
    config = TrainConfig.from_dict(payload["config"])
    config.run.run_dir = run_dir
    for name, value in changeable.items():
        setattr(config.run, name, value)
    return config


def command_train(args: argparse.Namespace) -> int:
    from voidrl.io.checkpoint import load_checkpoint
    from voidrl.train import train_from_config
    from voidrl.train.agent import resolve_device, summarize
    from voidrl.train.loop import check_run_dir

    options = {k: tuple(v) if isinstance(v, list) else v for k, v in vars(args).items()
               if k not in ("command", "algo", "resume", "seeds", "pretrain_steps") and not (k == "init_from" and v is None)}
    pretrain_config = None
    with usage_errors():
        if args.resume:
            config = resume_config(options)
        else:
            preset = options.pop("preset", None)
            if args.command == "pretrain":
                preset, options = pretrain_defaults(args.algo, preset, options)
            if args.command == "compare":
                pretrain_config = compare_pretrain_config(args, preset, options)
            if args.command in ("finetune", "compare") and "env" not in options and "init_from" in options:
                options["env"] = load_checkpoint(options["init_from"])["config"]["run"]["env"]  # the pre-trained run's
            config = make_config(args.algo, preset, **options)
        config.validate()
        resolve_device(config.run.device)
        if args.command == "compare":
            if args.seeds < 1:
                raise ValueError(f"--seeds must be a positive integer, got {args.seeds}")
        else:
            check_run_dir(config, args.resume)
    if args.command == "compare":
        from voidrl.train.compare import compare, run_to_completion

        if pretrain_config is not None:
            run_to_completion(pretrain_config)
            config.run.init_from = f"{pretrain_config.run_dir}/checkpoint.pt"
        print(compare(config, config.run.init_from, args.seeds))
        print(f"table: {config.run_dir}/comparison.md; plot: {config.run_dir}/comparison.png")
        return 0
    agent = train_from_config(config, resume=args.resume)
    run_dir = config.run_dir
    returns = _last_returns(f"{run_dir}/episodes.csv", 20)
    if returns:
        mean, std = summarize(returns)
        print(f"final score: mean return {mean:.1f} +- {std:.1f} over the last {len(returns)} training episodes")
    print(f"steps: {agent.step}; logs: {run_dir}/ (episodes.csv, metrics.csv, tensorboard/); checkpoint: {run_dir}/checkpoint.pt")
    return 0


def pretrain_defaults(algo: str, preset: str | None, options: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
    """Reward-free APT unless the user says otherwise; the thesis-pretrain preset on Atari."""
    options = {"intrinsic": "apt", "extrinsic_coef": 0.0, **options}
    if preset is None and "thesis-pretrain" in PRESETS.get(algo, {}) and suite_of(options.get("env", "CartPole-v1")) == "atari":
        preset = "thesis-pretrain"
    return preset, options


def compare_pretrain_config(args: argparse.Namespace, preset: str | None, options: dict[str, Any]) -> TrainConfig | None:
    """For ``compare --pretrain-steps N``: the pre-training run (validated now, run before the comparison)."""
    if ("init_from" in options) == (args.pretrain_steps is not None):
        raise ValueError("compare needs exactly one of --from CHECKPOINT and --pretrain-steps N")
    if args.pretrain_steps is None:
        return None
    if "run_dir" not in options:
        raise ValueError("compare --pretrain-steps needs --run-dir (the pre-trained run goes to RUN_DIR/pretrain)")
    finetune_only = ("init_from", "init_parts", "steps", "run_dir")
    pretrain_preset, pretrain_options = pretrain_defaults(
        args.algo, None if preset == "thesis" else preset, {k: v for k, v in options.items() if k not in finetune_only})
    config = make_config(args.algo, pretrain_preset, steps=args.pretrain_steps,
                         run_dir=f"{options['run_dir']}/pretrain", **pretrain_options)
    config.validate()
    return config


def _last_returns(path: str, count: int) -> list[float]:
    import csv

    with open(path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    return [float(row["return"]) for row in rows[-count:]]


def command_eval(args: argparse.Namespace) -> int:
    from voidrl.train.agent import Agent, resolve_device, summarize

    if args.episodes < 1:
        raise CliError(f"voidrl eval: --episodes must be a positive integer, got {args.episodes}")
    if args.num_envs is not None and args.num_envs < 1:
        raise CliError(f"voidrl eval: --num-envs must be a positive integer, got {args.num_envs}")
    with usage_errors():
        agent = Agent.load(args.checkpoint, resolve_device(args.device).type)
    returns = agent.evaluate(args.episodes, deterministic=not args.sampled, num_envs=args.num_envs, seed=args.seed)
    mean, std = summarize(returns)
    mode = "sampled" if args.sampled else "greedy"
    print(f"{agent.config.run.env}: mean return {mean:.2f} +- {std:.2f} over {len(returns)} episodes ({mode} actions)")
    return 0


def command_plot(args: argparse.Namespace) -> int:
    from pathlib import Path

    from voidrl.io.report import group_runs, plot_runs

    labels = []
    for label in args.label:
        name, _, pattern = label.partition("=")
        if not name or not pattern:
            raise CliError(f"voidrl plot: --label must look like NAME=GLOB, got {label!r}")
        labels.append((name, pattern))
    run_dirs = [Path(run_dir) for run_dir in args.run_dirs]
    for run_dir in run_dirs:
        if not run_dir.is_dir():
            raise CliError(f"voidrl plot: run directory {str(run_dir)!r} does not exist")
        if not (run_dir / "episodes.csv").is_file():
            raise CliError(f"voidrl plot: {str(run_dir / 'episodes.csv')!r} does not exist (not a run directory?)")
    with usage_errors():
        paths = plot_runs(group_runs(run_dirs, labels), Path(args.out))
    for path in paths:
        print(path)
    return 0


def command_envs(_: argparse.Namespace) -> int:
    for suite, ids in list_env_ids().items():
        print(f"{suite}: {' '.join(ids)}")
    return 0


@contextlib.contextmanager
def usage_errors():
    """Turn the ``ValueError`` of input checks (bad option, env id, run dir, checkpoint) into a ``CliError``."""
    try:
        yield
    except ValueError as error:
        raise CliError(f"voidrl: error: {error}") from None


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        handler = {"eval": command_eval, "envs": command_envs, "plot": command_plot}.get(args.command, command_train)
        return handler(args)
    except CliError as error:
        print(error, file=sys.stderr)
        return USAGE_ERROR
    except KeyboardInterrupt:
        print("voidrl: interrupted; resume with --resume from the last checkpoint", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
