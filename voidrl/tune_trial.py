"""One trial of ``voidrl tune``, in a process of its own: ``python -m voidrl.tune_trial --study-dir D --trial-id ID
--startup-trials S -- train ALGO ...`` runs the ``voidrl train`` command after ``--`` with
``voidrl.training.tune.ReportToTrial``: the run reports each evaluation to the trial in ``D/study.db`` and asks the
pruner itself. A pruned run stops at the evaluation that pruned it, checkpointed, and the process exits with
``PRUNED_STATUS``; otherwise with the command's own status."""

from __future__ import annotations

import argparse
from pathlib import Path

import optuna

from voidrl import cli
from voidrl.training.tune import PRUNED_STATUS, ReportToTrial, median_pruner, study_storage


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m voidrl.tune_trial", description=__doc__)
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
