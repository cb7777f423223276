"""One trial of ``voidrl tune``, in a process of its own: ``python -m voidrl.train.tune_trial --study-dir D
--trial-id ID --startup-trials S -- train ALGO ...`` runs the ``voidrl train`` command after ``--`` with
``ReportToTrial``, so that the run reports each evaluation to the trial in ``D/study.db`` and asks the pruner itself.
A pruned run stops at the evaluation that pruned it, checkpointed, and the process exits with ``PRUNED_STATUS``;
otherwise with the command's own status."""

from __future__ import annotations

import argparse
from pathlib import Path

import optuna

from voidrl import cli
from voidrl.callbacks import EVALUATION_RETURN, Callback
from voidrl.train.tune import PRUNED_STATUS, median_pruner, study_storage


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m voidrl.train.tune_trial", description=__doc__)
    parser.add_argument("--study-dir", required=True, type=Path)
    parser.add_argument("--trial-id", required=True, type=int, help="the trial's id in the study's storage")
    parser.add_argument("--startup-trials", required=True, type=int)
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- and the voidrl train command of the trial")
    args = parser.parse_args(argv)
    storage = study_storage(args.study_dir)
    name, = optuna.study.get_all_study_names(storage)
    study = optuna.load_study(study_name=name, storage=storage)
    settings = study.user_attrs["settings"]
    study.pruner = median_pruner(args.startup_trials, settings["steps"])
    reporter = ReportToTrial(optuna.Trial(study, args.trial_id), settings["steps"], settings["eval_every"])
    status = cli.main(args.command[1:] if args.command[:1] == ["--"] else args.command, callbacks=[reporter])
    return PRUNED_STATUS if status == 0 and reporter.pruned_at is not None else status


if __name__ == "__main__":
    cli.exit_process(main())
