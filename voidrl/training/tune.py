"""Hyperparameter search with Optuna (``voidrl tune``): TPE samples the algorithm's search space on top of a preset,
each trial is an ordinary run, and a median pruner stops trials whose greedy evaluations fall behind.

A trial writes its settings as a preset file, ``D/trial-NNNN/preset.json`` (the preset with the sampled options),
and trains in a process of its own: the command ``voidrl train ALGO --preset-file D/trial-NNNN/preset.json --run-dir
D/trial-NNNN --eval-every E ...``, run by ``voidrl.tune_trial`` with ``ReportToTrial``. After
each evaluation the run itself reports the mean return to Optuna (``trial.report`` at the multiple of E the
evaluation fell due at, the same for every trial whatever its rollout size) and asks ``trial.should_prune()``
(Optuna's ``MedianPruner``: below the median of the finished trials at that step; never in the first quarter of the
steps, nor before ``startup_trials`` trials have finished). A pruned run stops there, checkpointed, its directory
whole, and its process exits with ``PRUNED_STATUS``: where it stops does not depend on the machine's load. The
objective is the mean of the run's last ``OBJECTIVE_EVALUATIONS`` evaluation means.

The study lives in ``D/study.db`` (Optuna's RDBStorage on SQLite, shared by this process and the trials' own), so
running the same command again resumes it. A trial found running there was cut off by a killed tune (the directory's
lock says none is alive): it is marked failed, its directory kept, and its parameters run again first as a new trial;
one stopped by a signal does the same. ``--parallel K`` runs K trials at once: K threads, each asking the study for a
trial and waiting on its process.
"""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

import optuna
from optuna.trial import FrozenTrial, Trial, TrialState

from voidrl.callbacks import EVALUATION_RETURN, Callback
from voidrl.configs.tune import TuneConfig
from voidrl.io.report import read_evaluations
from voidrl.io.run_dir import LOCK_NAME, RunDirInUse, RunDirLock
from voidrl.registry import ALGORITHMS
from voidrl.training.presets import make_config, preset_settings
from voidrl.training.runs import make_trainer
from voidrl.training.signals import GracefulStop, RunStopped, stop_with_parent
from voidrl.training.threads import available_cpus

STUDY_NAME = "study.db"
BEST_PRESET_NAME = "best-preset.json"
TRIALS_NAME = "trials.csv"
TRIAL_PRESET_NAME = "preset.json"
TRIAL_LOG_NAME = "train.log"
OBJECTIVE_EVALUATIONS = 3
"""A trial's value: the mean of its last this many evaluation means (the one at the end of the budget and the two
before), which favours the settings that got there and stayed over those that touched a score once."""
POLL_SECONDS = 0.25
"""How often a thread waiting on a trial's process checks for a stop signal to this one."""
PRUNED_STATUS = 3
"""The exit status of a trial's process whose run the pruner stopped."""
SQLITE_WAIT_SECONDS = 60
"""How long a process waits for another's write to study.db before it gives up."""


class TrialFailed(RuntimeError):
    """A trial's run ended with an error (its train.log says which); the study stops with it."""


def trial_dir(study_dir: Path, number: int) -> Path:
    return study_dir / f"trial-{number:04d}"


def study_label(settings: dict[str, Any]) -> str:
    """The study's name in study.db, and how messages name it: the algorithm and the environment."""
    return f"{settings['algo']} on {settings['env']}"


def suggest(trial: Trial, name: str, dimension: tuple[Any, ...]) -> Any:
    """A value of option ``name`` from its search-space ``dimension`` (``voidrl.configs.search``)."""
    kind, *bounds = dimension
    if kind == "categorical":
        return trial.suggest_categorical(name, bounds[0])
    if kind == "int":
        return trial.suggest_int(name, *bounds)
    return trial.suggest_float(name, *bounds, log=kind == "log_float")


def fitting_space(space: dict[str, tuple[Any, ...]], steps: int, steps_per_rollout_step: int) -> dict[str, tuple[Any, ...]]:
    """``space`` with its ``num_steps`` choices limited to rollouts a trial of ``steps`` environment steps can collect
    (``steps_per_rollout_step``: environments x action repeat); a ValueError when none fits."""
    if "num_steps" not in space or space["num_steps"][0] != "categorical":
        return space
    fitting = [n for n in space["num_steps"][1] if n * steps_per_rollout_step <= steps]
    if not fitting:
        least = min(space["num_steps"][1]) * steps_per_rollout_step
        raise ValueError(f"--steps {steps} is less than the smallest rollout of the search space ({least} environment steps: "
                         f"num_steps {min(space['num_steps'][1])} x {steps_per_rollout_step}); give --steps {least} or more")
    return {**space, "num_steps": ("categorical", fitting)}


SQLITE_HEADER = b"SQLite format 3\x00"


def trial_space(config: TuneConfig) -> dict[str, tuple[Any, ...]]:
    """The algorithm's search space, its rollouts limited to those a trial's budget holds (``fitting_space``)."""
    env = make_config(config.algo, config.preset, env=config.env).env
    return fitting_space(ALGORITHMS.config_class(config.algo).search_space, config.steps, env.num_envs * env.action_repeat)


def check_study_file(study_dir: Path) -> None:
    """A one-line ValueError where ``study_dir/study.db`` exists but cannot be the study's database (a directory, a
    file that is not SQLite); an empty file is an empty database."""
    path = study_dir / STUDY_NAME
    if path.is_dir():
        raise ValueError(f"{str(path)!r} is a directory, not a study database; choose another --study-dir")
    if path.is_file() and path.stat().st_size:
        with path.open("rb") as handle:
            if handle.read(len(SQLITE_HEADER)) != SQLITE_HEADER:
                raise ValueError(f"{str(path)!r} is not a study database (not an SQLite file); choose another --study-dir")


def study_storage(study_dir: Path) -> optuna.storages.RDBStorage:
    """The storage of the study in ``study_dir/study.db``, which the tune and its trials' processes write at once."""
    return optuna.storages.RDBStorage(f"sqlite:///{(study_dir / STUDY_NAME).resolve()}",
                                      engine_kwargs={"connect_args": {"timeout": SQLITE_WAIT_SECONDS}})


def median_pruner(startup_trials: int, steps: int) -> optuna.pruners.MedianPruner:
    """The study's pruner (Optuna keeps none in the database: the tune and each trial's process make the same)."""
    return optuna.pruners.MedianPruner(n_startup_trials=startup_trials, n_warmup_steps=steps // 4)


def open_study(config: TuneConfig, study_dir: Path) -> optuna.Study:
    """The study of ``config`` in ``study_dir/study.db``, made or loaded; a database holding a study with other
    settings (another algorithm or environment, another budget...) is refused, naming what differs."""
    settings = config.settings()
    storage = study_storage(study_dir)
    names = optuna.study.get_all_study_names(storage)
    if names and names != [study_label(settings)]:
        raise ValueError(f"--study-dir {str(study_dir)!r} holds the study of {', '.join(names)}, not of "
                         f"{study_label(settings)}; choose another --study-dir")
    # The sampler's seed moves on with the trials already run, so that a resumed study does not draw its first ones again.
    existing = len(optuna.load_study(study_name=names[0], storage=storage).trials) if names else 0
    study = optuna.create_study(
        storage=storage, study_name=study_label(settings), direction="maximize", load_if_exists=True,
        sampler=optuna.samplers.TPESampler(seed=config.seed + existing, n_startup_trials=config.startup_trials),
        pruner=median_pruner(config.startup_trials, config.steps))
    stored = study.user_attrs.get("settings")
    if stored is None:
        study.set_user_attr("settings", settings)
    elif stored != settings:
        changes = [f"--{name.replace('_', '-')} {stored.get(name)!r} -> {settings[name]!r}" for name in settings
                   if stored.get(name) != settings[name]]
        raise ValueError(f"--study-dir {str(study_dir)!r} holds the study of {study_label(stored)} made with other settings: "
                         f"{', '.join(changes)}; give the study's own to finish it, or choose another --study-dir")
    return study


def rerun_cut_off_trials(study: optuna.Study) -> list[int]:
    """Mark failed the trials left running by a tune that was killed, and queue their parameters to run first."""
    numbers = []
    for trial in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        study.tell(trial.number, state=TrialState.FAIL)
        study.enqueue_trial(trial.params, user_attrs={"rerun_of": trial.number})
        numbers.append(trial.number)
    return numbers


class ReportToTrial(Callback):
    """Reports each evaluation's mean return to ``trial`` at the multiple of ``every`` it fell due at (once per
    multiple), and stops the run where the pruner prunes the trial; the evaluation at the end of the budget
    (``steps``) is reported, never a pruning point. ``pruned_at``: the step reported last before the stop, else None."""

    def __init__(self, trial: optuna.Trial, steps: int, every: int):
        self.trial, self.steps, self.every = trial, steps, every
        self.reported: set[int] = set()
        self.pruned_at: int | None = None

    def on_evaluation(self, step: int, metrics: dict[str, float]) -> bool | None:
        due = step // self.every * self.every
        if due in self.reported:
            return None
        self.reported.add(due)
        self.trial.report(metrics[EVALUATION_RETURN], due)
        if step < self.steps and self.trial.should_prune():
            self.pruned_at = due
            return False
        return None


class TrialRunner:
    """The objective: one trial's run in a process of its own (which reports to the trial itself), waited on."""

    def __init__(self, config: TuneConfig, study_dir: Path, stop: GracefulStop):
        self.config, self.study_dir, self.stop = config, study_dir, stop
        self.space = trial_space(config)
        self.base = preset_settings(config.algo, config.env, config.preset)
        self.threads = config.torch_threads or max(1, available_cpus() // config.parallel)

    def trial_preset(self, params: dict[str, Any]) -> dict[str, dict[str, Any]]:
        """The preset file of a trial: the base preset with the sampled options in its algo_config."""
        return {**self.base, "algo_config": {**self.base.get("algo_config", {}), **params}}

    def command(self, trial: Trial, run_dir: Path) -> list[str]:
        """The trial's process: its ``voidrl train`` command, run by ``voidrl.tune_trial`` to report to ``trial``."""
        config = self.config
        return [sys.executable, "-m", "voidrl.tune_trial", "--study-dir", str(self.study_dir),
                # the storage's id of the trial, which Optuna's Trial is made from in another process
                "--trial-id", str(trial._trial_id), "--startup-trials", str(config.startup_trials), "--",
                "train", config.algo, "--env", config.env,
                "--preset-file", str(run_dir / TRIAL_PRESET_NAME), "--run-dir", str(run_dir), "--steps", str(config.steps),
                "--seed", str(config.seed), "--eval-every", str(config.evaluation_interval),
                "--eval-episodes", str(config.eval_episodes), "--torch-threads", str(self.threads), "--no-progress"]

    def __call__(self, trial: Trial) -> float:
        """The trial's value; ``optuna.TrialPruned`` when the pruner stopped its run, ``RunStopped`` on a signal to this
        process, ``TrialFailed`` when its run fails."""
        params = {name: suggest(trial, name, dimension) for name, dimension in self.space.items()}
        run_dir = trial_dir(self.study_dir, trial.number)
        run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / TRIAL_PRESET_NAME).write_text(json.dumps(self.trial_preset(params), indent=2) + "\n")
        with open(run_dir / TRIAL_LOG_NAME, "w") as log:
            process = subprocess.Popen(self.command(trial, run_dir), stdout=log, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL, process_group=0, preexec_fn=stop_with_parent())
        try:
            while process.poll() is None:
                self.stop.check()
                time.sleep(POLL_SECONDS)
        finally:
            if process.poll() is None:  # stopped by a signal: the run checkpoints and ends
                process.terminate()
                process.wait()
        if process.returncode == PRUNED_STATUS:
            raise optuna.TrialPruned()
        if process.returncode != 0:
            lines = (run_dir / TRIAL_LOG_NAME).read_text().strip().splitlines() or ["(no output)"]
            raise TrialFailed(f"trial {trial.number}: its run ended with status {process.returncode}: {lines[-1]} "
                              f"(see {run_dir / TRIAL_LOG_NAME})")
        means = [float(mean) for mean in read_evaluations(run_dir)[1]]
        if not means:
            raise TrialFailed(f"trial {trial.number}: its run wrote no evaluation (see {run_dir})")
        return sum(means[-OBJECTIVE_EVALUATIONS:]) / len(means[-OBJECTIVE_EVALUATIONS:])


def describe(trial: FrozenTrial) -> str:
    """One line for a finished trial: its value (or where it was pruned) and its parameters."""
    params = " ".join(f"{name}={value:.4g}" if isinstance(value, float) else f"{name}={value}" for name, value in trial.params.items())
    if trial.state == TrialState.PRUNED:
        return f"trial {trial.number}: pruned at step {trial.last_step} ({params})"
    return f"trial {trial.number}: {trial.value:.1f} ({params})"


def write_trials(study: optuna.Study, path: Path) -> None:
    """Every trial of the study, one row each: number, state, value (a pruned trial's: its last report), last reported
    step, the trial it reran (rerun_of), parameters."""
    trials = study.get_trials(deepcopy=False)
    names = list(dict.fromkeys(name for trial in trials for name in trial.params))
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["number", "state", "value", "last_step", "rerun_of", *names])
        for trial in trials:
            writer.writerow([trial.number, trial.state.name, "" if trial.value is None else trial.value,
                             "" if trial.last_step is None else trial.last_step, trial.user_attrs.get("rerun_of", ""),
                             *(trial.params.get(name, "") for name in names)])


class Tuner:
    """One study: ``Tuner(config)`` checks every setting and takes the study directory (a one-line ``ValueError``
    before any trial starts, for bad options as for a directory holding another study or in use); ``run()`` runs the
    trials left, writes trials.csv and best-preset.json and returns the summary to print."""

    def __init__(self, config: TuneConfig):
        config.validate()
        self.config, self.study_dir = config, Path(config.study_path)
        space = trial_space(config)
        tuned = {"num_steps": min(space["num_steps"][1])} if "num_steps" in space else {}  # the preset's own may not fit
        base = make_config(config.algo, config.preset, env=config.env, steps=config.steps, seed=config.seed,
                           eval_every=config.evaluation_interval, eval_episodes=config.eval_episodes, run_dir=str(self.study_dir),
                           **tuned)
        make_trainer(base, resume=True).close()  # every check of a run's options, its fit to the environment included
        check_study_file(self.study_dir)  # before the lock: a refused study leaves no file behind
        self.lock = RunDirLock(self.study_dir)
        try:
            self.lock.acquire()
        except RunDirInUse:
            owner = (self.study_dir / LOCK_NAME).read_text().strip() or "unknown"
            raise ValueError(f"--study-dir {str(self.study_dir)!r} is in use by process {owner} (another voidrl tune); wait "
                             "for it to end, or choose another --study-dir") from None
        try:
            optuna.logging.set_verbosity(optuna.logging.WARNING)  # not its INFO line on making a study: this module says what it does
            self.study = open_study(config, self.study_dir)
        except BaseException:
            self.lock.release()
            raise

    def run(self) -> str:
        config, study, study_dir = self.config, self.study, self.study_dir
        try:
            for number in rerun_cut_off_trials(study):
                print(f"voidrl tune: trial {number} was cut off (the tune running it was killed); marked failed, its "
                      "parameters run again", file=sys.stderr)
            finished = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.PRUNED))
            if len(finished) < config.trials:
                with GracefulStop() as stop:
                    try:
                        self.run_trials(config.trials - len(finished), TrialRunner(config, study_dir, stop))
                    except RunStopped as stopped:
                        print(f"voidrl tune: stopped by {stopped.signal_name}; the trials stopped are marked failed and "
                              "run again first: run the same command to finish the study", file=sys.stderr)
                        raise
            write_trials(study, study_dir / TRIALS_NAME)
            return summarize(study, config, study_dir)
        finally:
            self.lock.release()

    def run_trials(self, count: int, runner: TrialRunner) -> None:
        """``count`` trials, ``parallel`` at a time: threads, each asking the study for a trial, waiting on its run's
        process and telling the study how it ended. The first error or signal starts no more trials and is raised once
        the running ones have ended (on a signal they stop too: each is marked failed and its parameters queued)."""
        study, asking = self.study, threading.Lock()

        def run_one() -> None:
            runner.stop.check()
            with asking:  # SQLite locks no rows: two threads could otherwise take the same queued trial
                trial = study.ask()
            try:
                value = runner(trial)
            except optuna.TrialPruned:
                frozen = study.tell(trial, state=TrialState.PRUNED)
            except RunStopped:
                study.tell(trial, state=TrialState.FAIL)
                study.enqueue_trial(trial.params, user_attrs={"rerun_of": trial.number})
                raise
            except BaseException:
                study.tell(trial, state=TrialState.FAIL)
                raise
            else:
                frozen = study.tell(trial, value)
            print(f"voidrl tune: {describe(frozen)}", file=sys.stderr)

        started, running, error = 0, set(), None
        with ThreadPoolExecutor(self.config.parallel) as pool:
            while running or (started < count and error is None):
                while started < count and error is None and len(running) < self.config.parallel:
                    running.add(pool.submit(run_one))
                    started += 1
                done, running = wait(running, return_when=FIRST_COMPLETED)
                error = error or next((future.exception() for future in done if future.exception()), None)
        if error is not None:
            raise error


def summarize(study: optuna.Study, config: TuneConfig, study_dir: Path) -> str:
    """Write best-preset.json (the best trial's preset file) and say what the study found and how to train with it."""
    states = [trial.state for trial in study.get_trials(deepcopy=False)]
    counts = ", ".join(f"{states.count(state)} {'failed' if state == TrialState.FAIL else state.name.lower()}"
                       for state in TrialState if states.count(state))
    complete = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
    if not complete:
        return f"study {study_dir}: {counts}; no trial finished, so no best preset"
    best = study.best_trial
    shutil.copyfile(trial_dir(study_dir, best.number) / TRIAL_PRESET_NAME, study_dir / BEST_PRESET_NAME)
    preset_file = study_dir / BEST_PRESET_NAME
    return "\n".join([
        f"study {study_dir} ({study_label(config.settings())}): {counts}; trials: {study_dir / TRIALS_NAME}",
        f"best: {describe(best)}, the mean greedy return of its last {OBJECTIVE_EVALUATIONS} evaluations "
        f"(run: {trial_dir(study_dir, best.number)})",
        f"preset: {preset_file}",
        f"train with it: voidrl train {config.algo} --env {config.env} --steps {config.steps} --preset-file {preset_file}",
    ])
