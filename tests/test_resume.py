"""Resume that forgives: the original command again, a run killed before its first checkpoint, SIGTERM and
SIGINT writing a checkpoint, and one restore path for the collapse guard and the resume."""

import signal
import subprocess
import time

import pytest
import torch

import voidrl
from tests.test_cli import VOIDRL, read_rows, run
from voidrl.cli import main
from voidrl.io.checkpoint import load_checkpoint
from voidrl.training.loop import Trainer
from voidrl.training.presets import make_config

ORIGINAL = ["train", "ppo", "--env", "CartPole-v1", "--seed", "1", "--num-steps", "64", "--run-dir", "run", "--no-progress"]
"""8 envs x 64 steps: 512 steps per update."""


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def metric_steps(run_dir):
    return [int(row["step"]) for row in read_rows(run_dir / "metrics.csv")]


def test_the_original_command_with_resume_appended_continues_the_run(in_tmp):
    assert main([*ORIGINAL, "--steps", "1024"]) == 0
    assert main([*ORIGINAL, "--steps", "2048", "--resume", "--no-deterministic-kernels"]) == 0  # how it runs may change
    assert metric_steps(in_tmp / "run") == [512, 1024, 1536, 2048]


def test_a_run_stored_with_an_option_that_cannot_act_resumes_with_its_original_command(in_tmp, capsys):
    """A run started before such options were refused (mixture_modes on CartPole) goes on; a new one is refused."""
    config = make_config("ppo", env="CartPole-v1", seed=1, num_steps=64, run_dir="run", progress=False, steps=512)
    config.algo_config.mixture_modes = 2  # as the command line stored it then
    Trainer(config).train()
    assert main([*ORIGINAL, "--mixture-modes", "2", "--steps", "1024", "--resume"]) == 0
    assert metric_steps(in_tmp / "run") == [512, 1024]
    capsys.readouterr()
    assert main([*ORIGINAL[:-3], "--mixture-modes", "2", "--run-dir", "new"]) == 2
    assert "mixture_modes acts with continuous_policy mixture only" in capsys.readouterr().err
    assert not (in_tmp / "new").exists()


def test_resume_names_each_changed_option_with_its_old_and_new_value(in_tmp, capsys):
    assert main([*ORIGINAL, "--steps", "512"]) == 0
    capsys.readouterr()
    assert main([*ORIGINAL, "--steps", "1024", "--resume", "--seed", "2", "--gamma", "0.9", "--preset", "cartpole"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "gamma 0.98 -> 0.9, seed 1 -> 2" in line
    assert metric_steps(in_tmp / "run") == [512]  # untouched


def test_a_run_killed_before_its_first_checkpoint_starts_over_on_resume(in_tmp, capsys):
    assert main([*ORIGINAL, "--steps", "1024"]) == 0
    fresh = (in_tmp / "run" / "episodes.csv").read_text()
    (in_tmp / "run" / "checkpoint.pt").unlink()  # as if killed before it was written
    with open(in_tmp / "run" / "episodes.csv", "a") as handle:
        handle.write("1536,9.0,9\n")  # a row past anything the new run has done
    capsys.readouterr()
    assert main(["train", "ppo", "--resume", "--run-dir", "run", "--no-progress"]) == 0
    assert "has no checkpoint (its run stopped before the first one); starting the run over" in capsys.readouterr().err
    assert (in_tmp / "run" / "episodes.csv").read_text() == fresh  # the same seeded run, each row once
    assert metric_steps(in_tmp / "run") == [512, 1024]


def test_resume_of_a_directory_without_a_run_starts_it(in_tmp, capsys):
    assert main([*ORIGINAL, "--steps", "512", "--resume"]) == 0
    assert "has no checkpoint yet; starting the run" in capsys.readouterr().err
    assert load_checkpoint(in_tmp / "run" / "checkpoint.pt")["step"] == 512


def test_python_resumes_with_the_stored_settings_and_speaks_of_arguments(tmp_path):
    """``voidrl.train(..., resume=True)`` is ``--resume``: the stored settings, only the budget and how the run is
    executed may change; its refusals name arguments, never flags."""
    run_dir = str(tmp_path / "run")
    voidrl.train("ppo", steps=512, seed=1, num_steps=64, run_dir=run_dir, progress=False)
    with pytest.raises(ValueError, match="already holds a run; pass resume=True") as held:
        voidrl.train("ppo", steps=1024, run_dir=run_dir)
    with pytest.raises(ValueError, match="these differ from it: gamma 0.98 -> 0.9 ") as changed:
        voidrl.train("ppo", run_dir=run_dir, resume=True, gamma=0.9)
    with pytest.raises(ValueError, match="unknown option.s. for ppo: gama") as unknown:
        voidrl.train("ppo", run_dir=run_dir, resume=True, gama=0.9)
    with pytest.raises(ValueError, match="resume .--resume. needs run_dir") as nowhere:
        voidrl.train("ppo", resume=True)
    assert not any("--" in str(error.value).replace("(--resume)", "") for error in (held, changed, unknown, nowhere))
    agent = voidrl.train("ppo", steps=1024, seed=1, run_dir=run_dir, resume=True, progress=False)  # the seed given again
    assert agent.step == 1024 and metric_steps(tmp_path / "run") == [512, 1024]


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_writes_a_checkpoint_at_a_safe_point_and_the_run_resumes(tmp_path, signum):
    per_update = 512
    args = [*ORIGINAL, "--steps", "1000000", "--checkpoint-every", "100000"]  # no periodic checkpoint before the signal
    process = subprocess.Popen([*VOIDRL, *args], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    metrics = tmp_path / "run" / "metrics.csv"
    deadline = time.time() + 120
    while time.time() < deadline and not (metrics.exists() and len(read_rows(metrics)) >= 3):
        time.sleep(0.05)
    process.send_signal(signum)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 128 + signum, err
    name = signal.Signals(signum).name
    assert f"stopped by {name}" in err and "checkpoint written; continue with --resume" in err, err
    step = load_checkpoint(tmp_path / "run" / "checkpoint.pt")["step"]
    steps = [int(row["step"]) for row in read_rows(metrics)]
    assert steps == list(range(per_update, step + 1, per_update))  # the checkpoint is at the last logged update

    result = run("train", "ppo", "--resume", "--run-dir", "run", "--steps", str(step + 2 * per_update), "--no-progress",
                 cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    steps = [int(row["step"]) for row in read_rows(metrics)]
    assert steps == list(range(per_update, step + 2 * per_update + 1, per_update))


def test_the_collapse_guard_restores_the_same_state_as_a_resume(tmp_path):
    """The notebook's pendulum: the mixture policy's persistent action noise is part of the learning state."""
    config = make_config("a2c", env="voidrl/InvertedPendulumFall-v5", num_envs=2, collapse_entropy=-1e9,
                         run_dir=str(tmp_path / "run"), progress=False)
    trainer = Trainer(config)
    trainer.save(healthy=True)
    healthy_noise = trainer.action_noise.uniforms.clone()
    healthy_policy = {k: v.clone() for k, v in trainer.algo.policy.state_dict().items()}
    for _ in range(5):
        trainer.action_noise.draw()
    with torch.no_grad():
        for parameter in trainer.algo.policy.parameters():
            parameter.add_(1.0)
    assert trainer.restore_healthy()
    assert torch.equal(trainer.action_noise.uniforms, healthy_noise)
    assert all(torch.equal(v, healthy_policy[k]) for k, v in trainer.algo.policy.state_dict().items())
    trainer.close()


def test_a_run_killed_mid_line_before_its_first_checkpoint_resumes_with_its_logs_repaired(in_tmp, capsys):
    # the state of a run killed within its first update: config.json, a header cut short, a metrics row cut short
    run_dir = in_tmp / "run"
    assert main([*ORIGINAL, "--steps", "512"]) == 0
    (run_dir / "checkpoint.pt").unlink()
    (run_dir / "episodes.csv").write_text("step,ret")
    (run_dir / "metrics.csv").write_text((run_dir / "metrics.csv").read_text().splitlines()[0] + "\n512,0.1")
    capsys.readouterr()
    assert main(["train", "ppo", "--resume", "--run-dir", "run", "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert "starting the run over" in captured.err and "episodes.csv: dropped 1 damaged line(s)" in captured.err
    assert "metrics.csv: dropped 1 damaged line(s)" in captured.err
    assert "final score: mean return" in captured.out  # reading episodes.csv at the end works (a KeyError before)
    assert read_rows(run_dir / "episodes.csv")[0].keys() == {"step", "return", "length"}
    assert metric_steps(run_dir) == [512]


def test_temporary_files_a_killed_writer_left_are_removed_when_the_run_resumes(in_tmp, capsys):
    run_dir = in_tmp / "run"
    assert main([*ORIGINAL, "--steps", "512"]) == 0
    leftovers = [run_dir / ".checkpoint.pt.k2j4x9.tmp", run_dir / ".best.pt.a1b2c3.tmp", run_dir / "metrics.tmp"]
    for path in leftovers:
        path.write_bytes(b"half a file")
    capsys.readouterr()
    assert main([*ORIGINAL, "--steps", "1024", "--resume"]) == 0
    assert "removed .best.pt.a1b2c3.tmp, .checkpoint.pt.k2j4x9.tmp, metrics.tmp" in capsys.readouterr().err
    assert not any(path.exists() for path in leftovers)
    assert metric_steps(run_dir) == [512, 1024]


@pytest.mark.slow
def test_a_second_process_is_refused_the_run_directory_its_owner_trains_in(in_tmp, capsys):
    owner = subprocess.Popen([*VOIDRL, *ORIGINAL, "--steps", "100000000", "--torch-threads", "1"], cwd=in_tmp,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (in_tmp / "run" / "metrics.csv").exists():
            time.sleep(0.2)
        rows_before = len(read_rows(in_tmp / "run" / "metrics.csv"))
        assert main([*ORIGINAL, "--steps", "100000000", "--resume"]) == 2
        (line,) = capsys.readouterr().err.strip().splitlines()
        assert f"is in use by process {owner.pid}, which is training in it" in line
        assert owner.poll() is None and len(read_rows(in_tmp / "run" / "metrics.csv")) >= rows_before  # untouched
    finally:
        owner.send_signal(signal.SIGTERM)
        owner.wait(timeout=60)
    # the owner is gone (its lock with it): the directory can be resumed, whatever PID its lock file still names
    assert (in_tmp / "run" / ".lock").read_text().strip() == str(owner.pid)
    assert main([*ORIGINAL, "--steps", str(load_checkpoint(in_tmp / "run" / "checkpoint.pt")["step"] + 512), "--resume"]) == 0
