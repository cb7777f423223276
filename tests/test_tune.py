"""voidrl tune: a short PPO study on CartPole that is killed and resumed, prunes, and writes a preset that trains the
best trial's configuration again; one-line refusals of bad settings and of a study directory made for another study."""

import csv
import json
import signal
import subprocess
import sys
import time

import optuna
import pytest

from voidrl.callbacks import Callback
from voidrl.cli import main
from voidrl.training.tune import OBJECTIVE_EVALUATIONS, ReportToTrial, fitting_space

VOIDRL = [sys.executable, "-m", "voidrl"]
SEED = "4"
"""The study's seed, and the best trial's when it is trained again."""
STUDY = ["tune", "ppo", "--env", "CartPole-v1", "--trials", "4", "--steps", "8192", "--eval-every", "2048",
         "--eval-episodes", "3", "--startup-trials", "2", "--seed", SEED, "--torch-threads", "1", "--study-dir", "study"]
"""Two random trials, then two sampled by TPE and open to pruning (seed 4 prunes one, killed or not; seed 1 did until the search space lost anneal_lr)."""


def read_rows(path):
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def wait_for(condition, process, timeout=120):
    deadline = time.monotonic() + timeout
    while not condition():
        assert process.poll() is None and time.monotonic() < deadline, process.stderr.read() if process.stderr else ""
        time.sleep(0.1)


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    """The study, killed (SIGKILL) while its second trial trains, then finished by the same command; the resumed
    command's result and the study directory. The tests that read it share one worker (their ``xdist_group``), so
    it runs once."""
    cwd = tmp_path_factory.mktemp("tune")
    killed = subprocess.Popen([*VOIDRL, *STUDY], cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wait_for(lambda: (cwd / "study" / "trial-0001" / "evaluations.csv").exists(), killed)
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    resumed = subprocess.run([*VOIDRL, *STUDY], cwd=cwd, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    return resumed, cwd / "study"


@pytest.mark.slow
@pytest.mark.xdist_group("tune-study")  # one worker sets the module's study up once
def test_a_killed_study_resumes_and_runs_the_cut_off_trial_again(study):
    resumed, study_dir = study
    trials = read_rows(study_dir / "trials.csv")
    failed = [trial for trial in trials if trial["state"] == "FAIL"]
    assert len(failed) == 1 and f"trial {failed[0]['number']} was cut off" in resumed.stderr
    rerun = [trial for trial in trials if trial["rerun_of"] == failed[0]["number"]]
    parameters = [name for name in trials[0] if name not in ("number", "state", "value", "last_step", "rerun_of")]
    assert len(rerun) == 1 and all(rerun[0][name] == failed[0][name] for name in parameters)
    assert sum(trial["state"] in ("COMPLETE", "PRUNED") for trial in trials) == 4
    for trial in trials:  # every trial is an ordinary run directory, the cut-off one kept
        assert (study_dir / f"trial-{int(trial['number']):04d}" / "config.json").is_file()


@pytest.mark.slow
@pytest.mark.xdist_group("tune-study")  # one worker sets the module's study up once
def test_the_median_pruner_stops_a_trial_at_the_evaluation_that_pruned_it(study):
    resumed, study_dir = study
    pruned = [trial for trial in read_rows(study_dir / "trials.csv") if trial["state"] == "PRUNED"]
    assert pruned
    for trial in pruned:
        assert f"trial {trial['number']}: pruned at step {trial['last_step']}" in resumed.stderr
        run_dir = study_dir / f"trial-{int(trial['number']):04d}"
        assert (run_dir / "checkpoint.pt").is_file()  # the run's directory is whole
        # the run asked the pruner itself, and stopped at that evaluation, before the end of its budget, whatever the load
        last_evaluation = int(read_rows(run_dir / "evaluations.csv")[-1]["step"])
        assert last_evaluation // 2048 * 2048 == int(trial["last_step"]) and last_evaluation < 8192
        assert f"ReportToTrial.on_evaluation asked to stop at step {last_evaluation};" in (run_dir / "train.log").read_text()


def test_a_trial_reports_each_evaluation_where_it_fell_due_and_is_never_pruned_at_the_end():
    study = optuna.create_study(direction="maximize", pruner=optuna.pruners.ThresholdPruner(lower=100.0))
    reporter = ReportToTrial(study.ask(), steps=8192, every=2048)
    assert reporter.on_evaluation(2560, {"eval/return_mean": 150.0}) is None  # above the threshold: on
    assert reporter.on_evaluation(4000, {"eval/return_mean": 90.0}) is None  # the same multiple again: not reported
    assert reporter.pruned_at is None
    assert reporter.on_evaluation(8192, {"eval/return_mean": 50.0}) is None  # the end of the budget: no pruning point
    assert reporter.trial.study.trials[0].intermediate_values == {2048: 150.0, 8192: 50.0}
    pruned = ReportToTrial(study.ask(), steps=8192, every=2048)
    assert pruned.on_evaluation(6200, {"eval/return_mean": 50.0}) is False and pruned.pruned_at == 6144


def test_callbacks_are_refused_by_a_command_that_trains_no_single_run():
    with pytest.raises(ValueError, match="callbacks are for a command that trains one run .* not envs"):
        main(["envs"], callbacks=[Callback()])


@pytest.mark.slow
@pytest.mark.xdist_group("tune-study")  # one worker sets the module's study up once
def test_the_best_preset_trains_the_best_trials_configuration(study, tmp_path):
    resumed, study_dir = study
    complete = [trial for trial in read_rows(study_dir / "trials.csv") if trial["state"] == "COMPLETE"]
    best = max(complete, key=lambda trial: float(trial["value"]))
    best_dir = study_dir / f"trial-{int(best['number']):04d}"
    means = [float(row["return_mean"]) for row in read_rows(best_dir / "evaluations.csv")][-OBJECTIVE_EVALUATIONS:]
    assert float(best["value"]) == pytest.approx(sum(means) / len(means))
    assert f"best: trial {best['number']}:" in resumed.stdout
    assert f"voidrl train ppo --env CartPole-v1 --steps 8192 --preset-file {study_dir.name}/best-preset.json" in resumed.stdout

    result = subprocess.run([*VOIDRL, "train", "ppo", "--env", "CartPole-v1", "--steps", "8192", "--seed", SEED,
                             "--eval-every", "2048", "--eval-episodes", "3", "--torch-threads", "1", "--no-progress",
                             "--preset-file", str(study_dir / "best-preset.json"), "--run-dir", str(tmp_path / "again")],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    again, trial = (json.loads((run_dir / "config.json").read_text()) for run_dir in (tmp_path / "again", best_dir))
    again["run"].pop("run_dir"), trial["run"].pop("run_dir")
    assert again == trial


@pytest.mark.slow
def test_a_signal_stops_the_running_trial_and_queues_it_to_run_again(tmp_path):
    args = ["tune", "ppo", "--trials", "2", "--steps", "40000", "--eval-every", "2048", "--eval-episodes", "2",
            "--torch-threads", "1", "--study-dir", "study"]
    process = subprocess.Popen([*VOIDRL, *args], cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wait_for(lambda: (tmp_path / "study" / "trial-0000" / "evaluations.csv").exists(), process)
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=120) == 128 + signal.SIGTERM
    assert "stopped by SIGTERM" in process.stderr.read()
    assert "voidrl: stopped by SIGTERM" in (tmp_path / "study" / "trial-0000" / "train.log").read_text()
    stopped, queued = optuna.load_study(study_name="ppo on CartPole-v1", storage=f"sqlite:///{tmp_path / 'study' / 'study.db'}").trials
    assert stopped.state == optuna.trial.TrialState.FAIL and queued.state == optuna.trial.TrialState.WAITING
    assert queued.system_attrs["fixed_params"] == stopped.params and queued.user_attrs == {"rerun_of": 0}


@pytest.mark.slow
def test_parallel_trials_run_at_once(tmp_path):
    result = subprocess.run([*VOIDRL, "tune", "ppo", "--trials", "2", "--parallel", "2", "--steps", "2048",
                             "--eval-every", "1024", "--eval-episodes", "2", "--torch-threads", "1", "--study-dir", "study"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    first, second = optuna.load_study(study_name="ppo on CartPole-v1", storage=f"sqlite:///{tmp_path / 'study' / 'study.db'}").trials
    assert first.state == second.state == optuna.trial.TrialState.COMPLETE
    assert first.datetime_start < second.datetime_complete and second.datetime_start < first.datetime_complete


@pytest.mark.parametrize("args,fragment", [
    (["tune", "ppo", "--trials", "0"], "trials must be a positive integer, got 0"),
    (["tune", "ppo", "--parallel", "0"], "parallel must be a positive integer, got 0"),
    (["tune", "ppo", "--eval-every", "0"], "eval_every must be a positive integer, got 0"),
    (["tune", "reinforce"], "reinforce has no search space; tune one of a2c, a3c, ppg, ppo"),
    (["tune", "ppo", "--preset", "nope"], "unknown preset 'nope' for ppo; choose one of cartpole"),
    (["tune", "ppo", "--env", "Bogus-v9"], "unknown environment id 'Bogus-v9'"),
    (["tune", "ppg", "--env", "Pendulum-v1"], "ppg supports discrete action spaces only"),  # the fit to the environment
])
def test_bad_settings_are_refused_in_one_line_before_any_trial(tmp_path, monkeypatch, capsys, args, fragment):
    monkeypatch.chdir(tmp_path)
    assert main(args) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in lines[0] and fragment in lines[0], lines
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("make,fragment", [
    (lambda path: path.write_text("not a database"), "study.db' is not a study database (not an SQLite file)"),
    (lambda path: path.mkdir(), "study.db' is a directory, not a study database"),
])
def test_a_study_file_that_cannot_be_a_database_is_refused_leaving_nothing(tmp_path, monkeypatch, capsys, make, fragment):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "study").mkdir()
    make(tmp_path / "study" / "study.db")
    assert main(["tune", "ppo", "--study-dir", "study"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0], lines
    assert [path.name for path in (tmp_path / "study").iterdir()] == ["study.db"]  # no lock left beside it


@pytest.mark.slow
@pytest.mark.xdist_group("tune-study")  # one worker sets the module's study up once
@pytest.mark.parametrize("change,fragment", [
    ({"ppo": "a2c"}, "holds the study of ppo on CartPole-v1, not of a2c on CartPole-v1; choose another --study-dir"),
    ({"CartPole-v1": "Acrobot-v1"}, "holds the study of ppo on CartPole-v1, not of ppo on Acrobot-v1"),
    ({"8192": "4096"}, "made with other settings: --steps 8192 -> 4096;"),
])
def test_a_study_directory_of_another_study_is_refused_in_one_line(study, monkeypatch, capsys, change, fragment):
    _, study_dir = study
    monkeypatch.chdir(study_dir.parent)
    before = (study_dir / "study.db").read_bytes()
    assert main([change.get(arg, arg) for arg in STUDY]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0], lines
    assert (study_dir / "study.db").read_bytes() == before


def test_the_search_space_holds_only_rollouts_a_trial_can_collect():
    """A trial of 2,048 steps on 8 environments cannot sample PPO's num_steps 512 (4,096 steps before its first update)."""
    space = {"num_steps": ("categorical", [16, 256, 512]), "gamma": ("float", 0.9, 0.99)}
    assert fitting_space(space, 2048, 8) == {"num_steps": ("categorical", [16, 256]), "gamma": ("float", 0.9, 0.99)}
    assert fitting_space({"gamma": ("float", 0.9, 0.99)}, 16, 8) == {"gamma": ("float", 0.9, 0.99)}
    with pytest.raises(ValueError, match="--steps 64 is less than the smallest rollout of the search space .128"):
        fitting_space(space, 64, 8)
