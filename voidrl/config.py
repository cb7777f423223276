"""Run configuration: ``TrainConfig`` gathers a run's options (the run's, the environment's, the algorithm's and the
reward plug-in's own, each a dataclass of ``voidrl.configs``), plus presets. Imports no torch or gymnasium, and nothing
above the configuration: the command line builds its options from here, and ``TrainConfig.validate`` checks what the
options alone tell; what needs the environment, a network or a file ``voidrl.training.preflight`` checks, and a preset
that the environment's suite decides ``voidrl.training.presets`` applies."""

from __future__ import annotations

import ast
import dataclasses
import importlib.util
import inspect
import json
import math
import re
import sys
import textwrap
import time
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from voidrl.configs.base import AlgorithmConfig
from voidrl.configs.conditions import RunFacts, inert_options
from voidrl.configs.env import EnvConfig
from voidrl.configs.run import RunConfig
from voidrl.registry import ALGORITHMS, REWARD_SOURCES
from voidrl.schedule import stored_schedule
from voidrl.validation import check_field_types, check_seed, require_non_negative, require_positive_integers


def progress_shown(progress: bool | None) -> bool:
    """Whether a ``progress`` option (True, False, or None: when stderr is a terminal) shows its bar."""
    return sys.stderr.isatty() if progress is None else progress


@dataclass
class TrainConfig:
    """Everything that defines a training run; ``config.json`` is its ``to_dict``."""

    algo: str
    run: RunConfig = field(default_factory=RunConfig)
    env: EnvConfig = field(default_factory=EnvConfig)
    algo_config: AlgorithmConfig = None  # type: ignore[assignment]
    """The algorithm's own options (its ``config_class``); its defaults when left out."""
    intrinsic_config: Any = None
    """The options of the reward plug-in ``run.intrinsic`` names (its ``config_class``); None without one."""
    given_options: frozenset[str] = field(default=frozenset(), repr=False, compare=False)
    """The options the user gave (``voidrl.training.presets.make_config``'s overrides), which ``validate`` refuses where
    they cannot act (``voidrl.configs.conditions``); not part of the run: empty in a config loaded from a run."""

    def __post_init__(self):
        if self.algo not in ALGORITHMS:
            raise ValueError(f"unknown algorithm {self.algo!r}; choose one of {', '.join(sorted(ALGORITHMS))}")
        if self.algo_config is None:
            self.algo_config = ALGORITHMS.config_class(self.algo)()
        if self.intrinsic_config is None and self.run.intrinsic is not None:
            self.intrinsic_config = intrinsic_config_class(self.run.intrinsic)()

    def sections(self) -> dict[str, Any]:
        """The config dataclasses by section name (the keys of ``to_dict`` besides ``algo``)."""
        sections = {"run": self.run, "env": self.env, "algo_config": self.algo_config}
        return sections if self.intrinsic_config is None else {**sections, "intrinsic_config": self.intrinsic_config}

    def validate(self) -> None:
        """Raise ``ValueError`` naming the first bad field; cheap (no I/O), runs before any training.

        Checks every field's type (finite numbers only), each one's range, and the combinations of
        options that cannot work together; what needs the environment, a network or an installed package
        (``voidrl.training.preflight``) and the fit to the environment's spaces are checked when the run is built
        (``Trainer``), still before anything is written.
        """
        for section in self.sections().values():
            check_field_types(section)
        require_positive_integers(self.run, ("steps", "checkpoint_every", "collapse_patience", "eval_every", "eval_episodes"))
        require_non_negative(self.run, ("torch_threads", "actors"))
        check_seed(self.run.seed)
        expected = None if self.run.intrinsic is None else intrinsic_config_class(self.run.intrinsic)
        if not (self.intrinsic_config is None if expected is None else isinstance(self.intrinsic_config, expected)):
            raise ValueError(f"intrinsic_config must be {'None' if expected is None else expected.__name__} with intrinsic "
                             f"{self.run.intrinsic}, got {type(self.intrinsic_config).__name__}")
        self.env.validate()
        self.algo_config.validate()
        if self.intrinsic_config is not None:
            self.intrinsic_config.validate()
        if self.run.intrinsic is not None and self.algo_config.own_intrinsic_reward:
            raise ValueError(f"intrinsic: {self.algo} computes its own novelty reward; a reward plug-in ({self.run.intrinsic}) "
                             "would add a second one on top of it; leave intrinsic out")
        if self.env.previous_action_reward and getattr(self.intrinsic_config, "extrinsic_coef", None) == 0:
            raise ValueError(f"previous_action_reward would show the task reward to a reward-free run (intrinsic {self.run.intrinsic} "
                             "with extrinsic_coef 0); leave it out, or give the task reward a weight")
        if self.run.wandb and importlib.util.find_spec("wandb") is None:
            raise ValueError("wandb needs the wandb package: pip install 'voidrl[wandb]'")
        if self.run.eval_video and self.run.eval_every is None:
            raise ValueError("eval_video needs eval_every (it records one episode at each evaluation)")
        if self.run.collapse_entropy is not None and self.algo_config.acts_greedily:
            watched = ", ".join(name for name in ALGORITHMS if not ALGORITHMS.config_class(name).acts_greedily)
            raise ValueError(f"collapse_entropy: {self.algo} acts greedily on Q-values and has no policy entropy to watch; "
                             f"the collapse guard applies to {watched}")
        if self.run.collapse_restore and self.run.collapse_entropy is None:
            raise ValueError("collapse_restore needs collapse_entropy (the entropy below which the guard acts)")
        if self.run.ray_address is not None and not self.run.actors:
            raise ValueError("ray_address needs actors > 0 (--actors N)")
        if self.run.actors:
            self.validate_remote_actors()
        self.algo_config.check_run(self.run)
        if self.run.steps < self.steps_per_update and not self.algo_config.whole_episodes:
            raise ValueError(
                f"steps {self.run.steps} is less than one update's rollout: {self.algo} collects num_envs {self.env.num_envs} x "
                f"num_steps {self.algo_config.num_steps}{f' x action_repeat {self.env.action_repeat}' if self.env.action_repeat > 1 else ''}"
                f" = {self.steps_per_update} environment steps before it learns; give steps {self.steps_per_update} or more, "
                "or a smaller num_envs or num_steps")
        if self.run.init_parts is not None and self.run.init_from is None:
            raise ValueError("init_parts needs init_from (finetune --from CHECKPOINT, train --init-from CHECKPOINT)")
        if not (math.isfinite(self.run.init_temperature) and self.run.init_temperature > 0):
            raise ValueError(f"init_temperature must be a positive number (1 keeps the loaded logits), got {self.run.init_temperature}")
        if self.run.init_temperature != 1.0 and self.run.init_from is None:
            raise ValueError("init_temperature needs init_from (finetune --from CHECKPOINT, train --init-from CHECKPOINT): it "
                             "rescales a loaded policy head")

    def refuse_inert_options(self, suite: str, action_space: Any = None, obs_shape: tuple[int, ...] | None = None) -> None:
        """A one-line ValueError naming the options the user gave (``given_options``) that cannot act on this run in
        ``suite`` (its environment's), by the ``acts_only`` conditions of its sections' configs; those on the
        environment's spaces are told once it is built (``Trainer`` passes ``action_space`` and ``obs_shape``)."""
        options = {f.name: getattr(section, f.name) for section in self.sections().values() for f in dataclasses.fields(section)}
        run = RunFacts(options, self.run.env, suite, action_space, obs_shape)
        refusal = inert_options(self.sections().values(), self.given_options, run)
        if refusal is not None:
            raise ValueError(refusal)

    def validate_remote_actors(self) -> None:
        """What Ray actors cannot do: each would keep normalisation statistics of its own, and none runs a
        reward plug-in (the algorithm's config refuses the rest in its ``check_run``, and ``voidrl.training.preflight``
        an environment given from Python that their processes cannot find)."""
        remote = sorted(name for name in ALGORITHMS if ALGORITHMS.config_class(name).remote_actors)
        if self.algo not in remote:
            raise ValueError(f"actors > 0 needs an algorithm with remote actors ({', '.join(remote)}), not {self.algo}")
        if self.run.intrinsic is not None:
            raise ValueError(f"intrinsic {self.run.intrinsic} needs actors 0: Ray actors do not run reward plug-ins")
        for name in ("normalize_observation", "normalize_reward"):
            if getattr(self.env, name):
                raise ValueError(f"{name} needs actors 0: each Ray actor would keep statistics of its own")

    @property
    def run_dir(self) -> str:
        """``run.run_dir``, or a new timestamped default that is stored on first use (so config.json shows it)."""
        if self.run.run_dir is None:
            stamp = time.strftime("%Y%m%d-%H%M%S")
            env_name = re.sub(r"[^\w.-]+", "_", self.run.env)  # an id given from Python may hold ':', '<' or spaces
            self.run.run_dir = f"runs/{self.algo}-{env_name}-seed{self.run.seed}-{stamp}"
        return self.run.run_dir

    @property
    def steps_per_update(self) -> int:
        return self.algo_config.num_steps * self.env.num_envs * self.env.action_repeat

    def to_dict(self) -> dict[str, Any]:
        """The config as JSON-ready values: a schedule given as a function by its name (``stored_schedule``)."""
        return {"algo": self.algo, **{name: {key: stored_schedule(value) for key, value in dataclasses.asdict(section).items()}
                                      for name, section in self.sections().items()}}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrainConfig:
        algo = data["algo"]
        if algo not in ALGORITHMS:
            raise ValueError(f"unknown algorithm {algo!r}")
        intrinsic = data["run"].get("intrinsic")
        return cls(
            algo=algo,
            run=_build(RunConfig, data["run"]),
            env=_build(EnvConfig, data["env"]),
            algo_config=_build(ALGORITHMS.config_class(algo), {
                RENAMED_FIELDS.get(name, name): RENAMED_VALUES.get((name, value), value) if isinstance(value, str) else value
                for name, value in without_parts_not_taken(algo, annealing_as_schedule(data["algo_config"])).items()}),
            # runs without a plug-in once stored APT's defaults here: ignored
            intrinsic_config=None if intrinsic is None else _build(intrinsic_config_class(intrinsic), data.get("intrinsic_config") or {}),
        )


def annealing_as_schedule(stored: dict[str, Any]) -> dict[str, Any]:
    """A stored PPO config's ``anneal_lr`` (until 2026-12-07) as the schedule it was: ``anneal_lr`` true with learning
    rate X is ``learning_rate "lin_X"``; other configs as they are."""
    if "anneal_lr" not in stored:
        return stored
    options = {name: value for name, value in stored.items() if name != "anneal_lr"}
    if stored["anneal_lr"]:
        options["learning_rate"] = f"lin_{options.get('learning_rate', 3e-4)!r}"
    return options


PARTS_NOT_TAKEN = ("guide", "guide_steps", "guide_decay_steps", "guide_margin_coef", "guide_margin", "prior", "prior_coef")
"""Options NGU and Agent57 inherited from R2D2 without being able to use them (refused unless at their defaults) until
2026-12-08, when the guide and the prior became parts that only R2D2 takes: their stored configs still load."""


def without_parts_not_taken(algo: str, stored: dict[str, Any]) -> dict[str, Any]:
    """A stored config of ``algo`` without the options of ``PARTS_NOT_TAKEN`` (by their names now) its config class no
    longer has."""
    known = {f.name for f in dataclasses.fields(ALGORITHMS.config_class(algo))}
    return {name: value for name, value in stored.items()
            if RENAMED_FIELDS.get(name, name) in known or RENAMED_FIELDS.get(name, name) not in PARTS_NOT_TAKEN}


def intrinsic_config_class(intrinsic: str | None) -> type:
    """The options class of reward plug-in ``intrinsic``; a ValueError naming the choices for an unknown one."""
    if intrinsic not in REWARD_SOURCES:
        raise ValueError(f"intrinsic must be one of {', '.join(map(str, (None, *REWARD_SOURCES)))}, got {intrinsic!r}")
    return REWARD_SOURCES.config_class(intrinsic)


def plugin_options() -> dict[str, tuple[str, ...]]:
    """Option name -> the reward plug-ins that have it, over every registered plug-in."""
    owners: dict[str, tuple[str, ...]] = {}
    for name in REWARD_SOURCES:
        for f in dataclasses.fields(REWARD_SOURCES.config_class(name)):
            owners[f.name] = (*owners.get(f.name, ()), name)
    return owners


RESUME_CHANGEABLE = ("steps", "device", "deterministic_kernels", "progress", "torch_threads", "wandb", "keep_weights", "actors", "ray_address")
"""Options a resumed run may change: the budget and how the run is executed, never what it learns (a new
number of actors spreads R2D2's epsilon ladder over the new number of environments)."""

RENAMED_VALUES = {("network", "thesis"): "dqn2013", ("critic_network", "thesis"): "dqn2013"}
"""Option values renamed since; the configs and checkpoints of runs written before still load."""
RENAMED_FIELDS = {"target": "td_target", "intrinsic_weight": "intrinsic_coef", "beta_clone": "clone_coef",
                  "guide_margin_weight": "guide_margin_coef", "prior_weight": "prior_coef"}
"""Algorithm options renamed since (old -> new): the old flag still works, and configs written before still load."""
RENAMED_PRESETS = {"thesis": "atari", "thesis-pretrain": "pretrain-nt-xent"}
"""Presets renamed since (old -> new), named after what they are rather than the document they came from; the
old names still work."""


def _build(cls: type, values: dict[str, Any]):
    known = {f.name: f for f in dataclasses.fields(cls)}
    unknown = set(values) - set(known)
    if unknown:
        raise ValueError(f"unknown {cls.__name__} fields: {', '.join(sorted(unknown))}")
    converted = {name: tuple(v) if isinstance(v, list) else v for name, v in values.items()}
    return cls(**converted)


def algorithm_presets(algo: str) -> dict[str, dict[str, dict[str, Any]]]:
    """Named settings of algorithm ``algo``, kept by its config class: preset -> section (run, env, algo_config,
    intrinsic_config) -> overrides."""
    return ALGORITHMS.config_class(algo).presets


ENV_PRESETS = {"CartPole-v1": "cartpole", "voidrl/InvertedPendulumFall-v5": "pendulum"}
"""Environments whose default preset is their own rather than their suite's (when the algorithm has it;
``voidrl.training.presets.default_preset``)."""


COMMAND_PRESETS = {"pretrain": {"atari": "pretrain", "minatar": "minatar-pretrain"}, "finetune": {"atari": "atari-finetune"}}
"""The preset ``pretrain`` and ``finetune`` each apply by default, per environment suite (where the algorithm has it)."""


def default_presets_text(command: str, algo: str) -> str:
    """What ``--preset`` defaults to for ``command algo``, from the tables above and the algorithm's presets."""
    from voidrl.configs.choices import SUITES

    presets = algorithm_presets(algo)
    rules = [f"{preset} on {suite} tasks" for suite, preset in COMMAND_PRESETS.get(command, {}).items() if preset in presets]
    rules += [f"{preset} on {env_id}" for env_id, preset in ENV_PRESETS.items() if preset in presets]
    rules += [f"{suite} on {suite} tasks" for suite in SUITES if suite in presets and not any(rule.endswith(f" on {suite} tasks") for rule in rules)]
    return "; ".join(rules) if rules else "none"


PRESET_SECTIONS = ("run", "env", "algo_config", "intrinsic_config")
"""The sections of a preset, each mapping option names of its part of ``TrainConfig`` to values."""


def load_preset_file(path: str, algo: str) -> dict[str, dict[str, Any]]:
    """A preset of ``algo`` from a JSON or TOML file of the built-in presets' shape (section -> option -> value),
    checked as they are (``check_preset``); lists become tuples. A one-line ValueError names the file."""
    file = Path(path)
    if file.suffix not in (".json", ".toml"):
        raise ValueError(f"preset file {path!r} must be a .json or .toml file")
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as error:
        raise ValueError(f"preset file {path!r} cannot be read ({error.strerror})") from None
    except UnicodeDecodeError as error:
        raise ValueError(f"preset file {path!r} is not UTF-8 text (byte {error.start}: {error.reason})") from None
    try:
        settings = json.loads(text) if file.suffix == ".json" else tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as error:
        raise ValueError(f"preset file {path!r} is not valid {file.suffix[1:].upper()} ({error})") from None
    check_preset(settings, algo, f"preset file {path!r}")
    return {section: {name: tuple(value) if isinstance(value, list) else value for name, value in values.items()}
            for section, values in settings.items()}


def check_preset(settings: Any, algo: str, source: str) -> None:
    """``settings`` is a preset of ``algo``: each section one of ``PRESET_SECTIONS`` (``intrinsic_config`` only with
    the plug-in named in ``run``), each option a field of its section holding a value of the field's type. Else a
    one-line ValueError that starts with ``source`` and names the bad key."""
    if not isinstance(settings, dict):
        raise ValueError(f"{source} must map sections ({', '.join(PRESET_SECTIONS)}) to options, got {type(settings).__name__}")
    for section, values in settings.items():
        if section not in PRESET_SECTIONS:
            raise ValueError(f"{source}: unknown section {section!r}; choose from {', '.join(PRESET_SECTIONS)}")
        if not isinstance(values, dict):
            raise ValueError(f"{source}: section {section!r} must map option names to values, got {values!r}")
    intrinsic = settings.get("run", {}).get("intrinsic")
    if "intrinsic_config" in settings and intrinsic is None:
        raise ValueError(f"{source}: section 'intrinsic_config' needs the plug-in it configures in run.intrinsic")
    classes = {"run": RunConfig, "env": EnvConfig, "algo_config": ALGORITHMS.config_class(algo)}
    for section, values in settings.items():
        cls = classes[section] if section in classes else intrinsic_config_class(intrinsic)
        options = cls()
        fields = {f.name for f in dataclasses.fields(cls)}
        for name, value in values.items():
            if name not in fields:
                raise ValueError(f"{source}: {section} has no option {name!r} for {algo} (see voidrl train {algo} --help)")
            setattr(options, name, tuple(value) if isinstance(value, list) else value)
        try:
            check_field_types(options)
        except ValueError as error:
            raise ValueError(f"{source}: {section}.{error}") from None


def refuse_unknown_options(algo: str, names: Iterable[str], known: Iterable[str]) -> None:
    """A ValueError naming the options among ``names`` that are not ``known`` (the fields of a run of ``algo``): a reward
    plug-in's when the run has no such plug-in, or none of any part."""
    unknown = sorted(set(names) - set(known))
    foreign = [name for name in unknown if name in plugin_options()]
    if foreign:
        plugins = plugin_options()[foreign[0]]
        raise ValueError(f"{', '.join(foreign)}: {' or '.join(plugins)} option{'s' if len(foreign) > 1 else ''}, "
                         f"used only with intrinsic {' or '.join(plugins)}")
    if unknown:
        raise ValueError(f"unknown option(s) for {algo}: {', '.join(unknown)}")


@cache
def field_docs(cls: type) -> dict[str, str]:
    """The docstring written under each field of dataclass ``cls`` (read from its source)."""
    docs = {}
    for base in reversed(cls.__mro__[1:]):
        if dataclasses.is_dataclass(base):
            docs.update(field_docs(base))
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    body = tree.body[0].body
    for node, following in zip(body, body[1:]):
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            docs[node.target.id] = " ".join(following.value.value.split())
    return docs


