"""Same seed, same run: the same command run twice, in two processes, the second beside a CPU-bound process, writes
the same episodes.csv and the same metrics.csv but for its timing columns, for every algorithm family and reward
plug-in (the torch thread count left to voidrl, as the README's main job leaves it)."""

from __future__ import annotations

import csv
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from tests.cli_helpers import voidrl
from voidrl.seeding import use_deterministic_kernels

MACHINE_COLUMNS = ("time/", "sys/")
"""What measures the machine, not the learning."""
SMALL_PPG = ["--num-envs", "4", "--num-steps", "32", "--policy-iterations", "2"]
SMALL_REPLAY = ["--preset", "minigrid", "--num-envs", "4", "--min-replay", "16", "--steps", "960"]
RUNS = {
    "reinforce": ["train", "reinforce", "--env", "CartPole-v1", "--steps", "2000"],
    "a2c": ["train", "a2c", "--env", "CartPole-v1", "--steps", "2048"],
    "npg": ["train", "npg", "--env", "CartPole-v1", "--preset", "cartpole", "--steps", "2048"],
    "trpo": ["train", "trpo", "--env", "CartPole-v1", "--preset", "cartpole", "--steps", "2048"],
    "ppo": ["train", "ppo", "--env", "CartPole-v1", "--steps", "2048"],
    "ppg-minatar": ["train", "ppg", "--env", "MinAtar/Breakout-v1", "--preset", "minatar", "--steps", "1024", *SMALL_PPG],
    "ppo-rnd-minigrid": ["train", "ppo", "--env", "MiniGrid-DoorKey-5x5-v0", "--preset", "minigrid-rnd", "--steps", "2048",
                         "--num-envs", "4", "--num-steps", "128"],
    "r2d2": ["train", "r2d2", "--env", "CartPole-v1", "--preset", "cartpole", "--steps", "1200", "--min-replay", "16",
             "--lstm-size", "16", "--head-size", "16", "--batch-size", "8"],
    "ngu": ["train", "ngu", "--env", "MiniGrid-Empty-5x5-v0", *SMALL_REPLAY],
    "agent57": ["train", "agent57", "--env", "MiniGrid-Empty-5x5-v0", *SMALL_REPLAY],
}
FAST = "ppo"
"""The one run the default suite checks; the others take 17-140 s each there (``--run-slow``)."""
ATARI_PRETRAIN = ["pretrain", "ppg", "--env", "ALE/MsPacman-v5", "--preset", "pretrain", "--steps", "2048", "--num-envs", "4",
                  "--num-steps", "64", "--policy-iterations", "2"]
APT_PRETRAIN = ["pretrain", "ppg", "--env", "MinAtar/Breakout-v1", "--steps", "1024", "--contrastive-start", "64",
                "--contrastive-batch-size", "16", *SMALL_PPG]


def learning_rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return [{key: value for key, value in row.items() if not key.startswith(MACHINE_COLUMNS)} for row in csv.DictReader(handle)]


def busy_process() -> subprocess.Popen:
    """A CPU-bound process that lasts at most two minutes (killed sooner by the test), at the lowest priority: it takes
    every CPU-second the run leaves idle and counts in the load average and in other processes' CPU as any busy
    process does, but does not stall the run's threads that share its CPU."""
    return subprocess.Popen([sys.executable, "-c", "import os, time\nos.nice(19)\nend = time.time() + 120\nwhile time.time() < end: pass"])


def run_twice(tmp_path: Path, args: list[str], *later: list[str]) -> None:
    """``args`` (then each of ``later``, whose ``{dir}`` names the pass's folder) once alone and once beside a busy
    process; every run directory's episodes and learning metrics compared."""
    for name in ("alone", "beside-a-busy-process"):
        busy = busy_process() if name == "beside-a-busy-process" else None
        try:
            for step, command in enumerate([args, *later]):
                command = [arg.format(dir=name) for arg in command]
                result = voidrl(*command, "--seed", "3", "--no-progress", "--run-dir", f"{name}/run{step}", cwd=tmp_path)
                assert result.returncode == 0, result.stderr
        finally:
            if busy is not None:
                busy.kill()
                busy.wait()
    for step in range(1 + len(later)):
        first, second = (tmp_path / name / f"run{step}" for name in ("alone", "beside-a-busy-process"))
        assert (first / "episodes.csv").read_text() == (second / "episodes.csv").read_text()
        assert learning_rows(first / "metrics.csv") == learning_rows(second / "metrics.csv")
        assert len(learning_rows(first / "metrics.csv")) >= 2


@pytest.mark.parametrize("name", [pytest.param(name, marks=[] if name == FAST else [pytest.mark.slow]) for name in sorted(RUNS)])
def test_the_same_command_gives_the_same_run(tmp_path, name):
    run_twice(tmp_path, RUNS[name])


@pytest.mark.slow
def test_apt_pre_training_and_fine_tuning_from_it_give_the_same_runs(tmp_path):
    """The README main job's arms: the pre-trained arm changed from run to run while the threads followed the load."""
    run_twice(tmp_path, APT_PRETRAIN, ["finetune", "ppg", "--from", "{dir}/run0/checkpoint.pt", "--steps", "1024", *SMALL_PPG])


def test_deterministic_kernels_leave_the_cpu_alone():
    """The switch is torch's process-wide one: a CPU run must not turn it on for whatever else the process runs."""
    before = torch.are_deterministic_algorithms_enabled()
    use_deterministic_kernels(torch.device("cpu"), not before)
    assert torch.are_deterministic_algorithms_enabled() == before


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_deterministic_kernels_switch_on_and_off_on_cuda():
    before = torch.are_deterministic_algorithms_enabled(), torch.backends.cudnn.deterministic
    try:
        use_deterministic_kernels(torch.device("cuda"), True)
        assert torch.are_deterministic_algorithms_enabled() and torch.backends.cudnn.deterministic
        use_deterministic_kernels(torch.device("cuda"), False)
        assert not torch.are_deterministic_algorithms_enabled() and not torch.backends.cudnn.deterministic
    finally:
        torch.use_deterministic_algorithms(before[0])
        torch.backends.cudnn.deterministic = before[1]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_apt_pre_training_on_cuda_gives_the_same_run(tmp_path):
    """Ms. Pac-Man's pre-training on a GPU, with its convolutions' and the contrastive loss's backward passes: it
    differed from run to run on an H100 before --deterministic-kernels (bench_device.py measures both settings)."""
    run_twice(tmp_path, [*ATARI_PRETRAIN, "--device", "cuda"])


def test_ray_actors_are_the_documented_exception():
    """Where determinism is not promised, the documentation says so, and so does --actors' help."""
    page = (Path(__file__).resolve().parents[1] / "docs" / "reproducibility.md").read_text()
    section = page.split("## Checkpoints, resume", 1)[0]
    assert "--actors" in section and "--device cuda" in section
    help_text = voidrl("train", "r2d2", "--help", cwd=Path.cwd()).stdout
    assert "not reproducible" in " ".join(help_text.split())


@pytest.mark.benchmark
def test_the_readme_main_job_writes_the_same_tables_twice(tmp_path):
    """The README's main job, exactly as the README gives it (minutes: a pre-training, then three seeds of each arm),
    run twice from nothing: the same comparison table and the same episodes in every run."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    command = re.search(r"\.venv/bin/voidrl (compare [^`\n]*?) --run-dir \S+", readme).group(1).split()
    for name in ("first", "second"):
        result = voidrl(*command, "--run-dir", name, cwd=tmp_path, timeout=3600)
        assert result.returncode == 0, result.stderr
    first, second = tmp_path / "first", tmp_path / "second"
    assert (first / "comparison.md").read_text() == (second / "comparison.md").read_text()
    runs = sorted(path.relative_to(first) for path in first.rglob("episodes.csv"))
    assert len(runs) == 7  # the pre-training and three seeds of each arm
    for run in runs:
        assert (first / run).read_text() == (second / run).read_text(), run
