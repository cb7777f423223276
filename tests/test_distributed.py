"""Actors on Ray through the command line: an R2D2 actor killed mid-run is replaced and the run finishes,
then resumes in one process (no actors) from its checkpoint with its replay; A3C's actor-learners send
gradients of parameters the others have moved; bad engine options fail at once."""

import csv
import os
import pickle
import signal
import socket
import subprocess
import sys
import time

import numpy as np
import pytest
import torch

pytest.importorskip("ray")
pytestmark = pytest.mark.xdist_group("ray")  # one pytest worker: two local Ray clusters at once slow both

from voidrl.cli import main  # noqa: E402
from voidrl.distributed.engine import tensor_from_wire, tensor_to_wire  # noqa: E402
from voidrl.io.checkpoint import load_checkpoint  # noqa: E402

SMALL = ["--env", "CartPole-v1", "--preset", "cartpole", "--lstm-size", "16", "--head-size", "16", "--batch-size", "8",
         "--min-replay", "16", "--checkpoint-every", "10", "--save-replay", "--torch-threads", "1", "--no-progress"]


def metric_rows(run_dir):
    path = run_dir / "metrics.csv"
    return list(csv.DictReader(path.open())) if path.exists() else []


RUN_MARK = "VOIDRL_TEST_RUN"
"""An environment variable naming the run under test: Ray's processes inherit the driver's environment, so a
run's own processes are found by it after the driver is gone, and another run's, still shutting down, are not."""


def start_run(command: list[str], run_dir) -> subprocess.Popen:
    """``command`` started with ``RUN_MARK`` set to ``run_dir``."""
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, RUN_MARK: str(run_dir)})


def processes_of(run_dir, title: str = "") -> set[int]:
    """Live processes started by the run of ``run_dir`` (its driver, the local Ray cluster, its actors) whose
    command line starts with ``title``."""
    mark = f"{RUN_MARK}={run_dir}".encode()
    found = set()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/environ", "rb") as environ, open(f"/proc/{entry.name}/cmdline", "rb") as cmdline:
                if mark in environ.read().split(b"\0") and cmdline.read().startswith(title.encode()):
                    found.add(int(entry.name))
        except OSError:  # ended while read, or not ours to read
            pass
    return found


def assert_no_process_outlives(run_dir, seconds: float = 120) -> None:
    """Every process of the run gone within ``seconds`` of its driver's exit (a loaded machine slows Ray's
    shutdown, but nothing of a run may stay behind)."""
    deadline = time.monotonic() + seconds
    while processes_of(run_dir) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not processes_of(run_dir), "processes of the run outlived it"


def stop_after_rows(command: list[str], run_dir, rows: int, learning: bool = False) -> tuple[int, str]:
    """Start ``command``, send it SIGTERM once its metrics.csv has ``rows`` rows (and, with ``learning``, its last row
    counts a gradient step: how many rows that takes depends on how fast the Ray actors deliver beside other work); its
    exit status and stderr."""

    def ready() -> bool:
        written = metric_rows(run_dir)
        return len(written) >= rows and (not learning or float(written[-1].get("train/updates") or 0) > 0)

    run = start_run(command, run_dir)
    try:
        deadline = time.monotonic() + 480
        while not ready() and run.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert run.poll() is None, "the run ended before the signal"
        run.send_signal(signal.SIGTERM)
        _, stderr = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            run.kill()
    return run.returncode, stderr


@pytest.mark.slow
def test_a_killed_actor_is_replaced_the_run_finishes_and_resumes(tmp_path):
    run_dir = tmp_path / "run"
    command = [sys.executable, "-m", "voidrl", "train", "r2d2", *SMALL, "--actors", "2", "--steps", "3000", "--run-dir", str(run_dir)]
    run = start_run(command, run_dir)

    def actor_pids():
        return processes_of(run_dir, "ray::ActorWorker")

    deadline = time.monotonic() + 240
    while (len(metric_rows(run_dir)) < 3 or len(actor_pids()) < 2) and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    victims = actor_pids()
    assert run.poll() is None and len(victims) == 2, "the run ended or never started its actors"
    killed_at = len(metric_rows(run_dir))
    os.kill(min(victims), signal.SIGKILL)
    while run.poll() is None and time.monotonic() < deadline:
        if actor_pids() - victims:  # Ray started a replacement
            break
        time.sleep(0.2)
    replaced = bool(actor_pids() - victims)
    _, stderr = run.communicate(timeout=300)
    assert run.returncode == 0, stderr
    assert replaced, "no new actor process after the kill"
    assert_no_process_outlives(run_dir)
    rows = metric_rows(run_dir)
    assert int(rows[-1]["step"]) >= 3000 and len(rows) > killed_at + 5
    assert float(rows[-1]["train/updates"]) > 0 and float(rows[-1]["time/actor_sps"]) > 0
    stored = load_checkpoint(run_dir / "checkpoint.pt")["algorithm"]["replay"]["index"]["added"]
    segments = sorted(tuple(map(int, path.stem.split("-"))) for path in (run_dir / "replay").glob("*.pt"))
    assert segments[-1][1] == stored > 16 and len(segments) > 1  # a segment a checkpoint, from the replay server
    assert all(older[1] == newer[0] for older, newer in zip(segments, segments[1:]))
    assert main(["train", "r2d2", *SMALL, "--actors", "0", "--steps", "3400", "--run-dir", str(run_dir), "--resume"]) == 0
    resumed = load_checkpoint(run_dir / "checkpoint.pt")
    assert resumed["step"] >= 3400 and resumed["algorithm"]["replay"]["index"]["added"] > stored


@pytest.mark.slow
def test_a_dead_replay_server_ends_the_run_in_one_line_with_the_learner_checkpointed(tmp_path):
    run_dir = tmp_path / "run"
    options = [option for option in SMALL if option != "--save-replay"]
    run = start_run([sys.executable, "-m", "voidrl", "train", "r2d2", *options, "--actors", "2", "--steps", "100000000",
                     "--run-dir", str(run_dir)], run_dir)
    try:
        deadline = time.monotonic() + 240
        while (len(metric_rows(run_dir)) < 3 or not processes_of(run_dir, "ray::Hosted")) and run.poll() is None \
                and time.monotonic() < deadline:
            time.sleep(0.2)
        (server,) = processes_of(run_dir, "ray::Hosted")
        os.kill(server, signal.SIGKILL)
        _, stderr = run.communicate(timeout=180)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 1, stderr
    assert "Traceback" not in stderr, stderr  # before: a Ray traceback and no checkpoint
    line = stderr.strip().splitlines()[-1]  # Ray's own notices may come first
    assert "the replay server died at step" in line and "the learner's state at step" in line and "--resume" in line
    assert load_checkpoint(run_dir / "checkpoint.pt")["step"] >= int(metric_rows(run_dir)[-1]["step"])
    assert_no_process_outlives(run_dir)


@pytest.mark.slow
@pytest.mark.parametrize("algo", ["r2d2"])  # a3c runs the same engine loop
def test_sigterm_stops_a_ray_run_with_a_checkpoint_and_no_ray_process_left(tmp_path, algo):
    run_dir = tmp_path / "run"
    options = SMALL if algo == "r2d2" else ["--env", "CartPole-v1", "--preset", "cartpole", "--torch-threads", "1", "--no-progress"]
    command = [sys.executable, "-m", "voidrl", "train", algo, *options, "--actors", "2", "--steps", "100000000",
               "--run-dir", str(run_dir)]
    returncode, stderr = stop_after_rows(command, run_dir, 3)
    assert returncode == 128 + signal.SIGTERM, stderr  # before: 15, Ray's handler, and no checkpoint
    assert "stopped by SIGTERM" in stderr and "checkpoint written" in stderr
    assert load_checkpoint(run_dir / "checkpoint.pt")["step"] >= int(metric_rows(run_dir)[-1]["step"])
    assert_no_process_outlives(run_dir)


@pytest.mark.parametrize("extra,message", [
    (["--actors", "1", "--ray-address", "127.0.0.1:1"], "ray_address '127.0.0.1:1': no Ray head answers there"),
    (["--actors", "1", "--ray-address", "nowhere"], "ray_address must be host:port, ray://host:port or auto"),
    (["--actors", "2", "--ray-address", "auto"], "ray_address auto: no Ray cluster runs on this machine"),
    (["--ray-address", "127.0.0.1:6379"], "ray_address needs actors > 0"),
    (["--actors", "-1"], "actors must be >= 0"),
])
def test_bad_engine_options_are_one_line_errors_before_anything_is_written(tmp_path, capsys, extra, message):
    if "auto" in extra:
        from ray._private.services import canonicalize_bootstrap_address

        try:
            found = canonicalize_bootstrap_address("auto")
        except ConnectionError:
            found = None
        if found is not None:  # a live head, or the address file of a cluster that ended without removing it
            host, _, port = found.rpartition(":")
            try:
                socket.create_connection((host, int(port)), timeout=3).close()
            except OSError:
                message = f"ray_address {found!r}: no Ray head answers there"
            else:
                pytest.skip("a Ray cluster runs on this machine, which --ray-address auto would join")
    assert main(["train", "r2d2", *SMALL, "--steps", "100", "--run-dir", str(tmp_path / "bad"), *extra]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "bad").exists()


def test_actors_need_a_learner_that_has_them(tmp_path, capsys):
    assert main(["train", "ppo", "--actors", "2", "--no-progress", "--run-dir", str(tmp_path / "bad")]) == 2
    assert "actors > 0 needs an algorithm with remote actors (a3c, agent57, ngu, r2d2), not ppo" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize("algo", ["agent57"])
def test_the_policy_family_trains_on_ray_actors_stops_resumes_and_is_evaluated(tmp_path, capsys, algo):
    """Each actor keeps its episodic memories, reward statistics and (Agent57) bandits; its bandits come back
    to the checkpoint with its sequences' deliveries and go back to it on resume. Agent57 is NGU's family with
    bandits on top, so its run covers NGU's actors too (NGU's own run took 140 s more on the one worker that runs
    the Ray tests, the suite's longest test)."""
    run_dir = tmp_path / algo
    options = ["--env", "MiniGrid-Empty-5x5-v0", "--preset", "minigrid", "--num-envs", "4", "--min-replay", "16",
               "--lstm-size", "32", "--head-size", "32", "--checkpoint-every", "5", "--torch-threads", "1", "--no-progress",
               "--run-dir", str(run_dir)]
    command = [sys.executable, "-m", "voidrl", "train", algo, *options, "--actors", "2", "--steps", "100000000"]
    returncode, stderr = stop_after_rows(command, run_dir, 12, learning=True)
    assert returncode == 128 + signal.SIGTERM and "checkpoint written" in stderr, stderr
    assert_no_process_outlives(run_dir)
    rows = metric_rows(run_dir)
    assert float(rows[-1]["train/updates"]) > 0 and float(rows[-1]["ngu/intrinsic"]) > 0
    saved = load_checkpoint(run_dir / "checkpoint.pt")
    actors = saved["algorithm"]["actors"]
    assert len(actors) == 2
    if algo == "agent57":
        assert all(len(actor["bandits"]) == 4 for actor in actors)  # each actor's 4 environments' bandits came back
        assert any(bandit["history"] for actor in actors for bandit in actor["bandits"])
    statistics = saved["algorithm"]["policy"]["novelty._extra_state"]["error_stats"]
    assert float(statistics["count"]) > 100, "the learner's network carries the actors' reward statistics"
    steps = int(saved["step"])
    assert main(["train", algo, *options, "--actors", "2", "--steps", str(steps + 640), "--resume"]) == 0
    resumed = load_checkpoint(run_dir / "checkpoint.pt")
    assert resumed["step"] >= steps + 640 and resumed["algorithm"]["updates"] > saved["algorithm"]["updates"]
    member = "best" if algo == "agent57" else "1"
    capsys.readouterr()
    assert main(["eval", "--checkpoint", str(run_dir / "checkpoint.pt"), "--episodes", "2", "--member", member]) == 0
    assert "member j = " in capsys.readouterr().out


@pytest.mark.slow
def test_a3c_actor_learners_send_gradients_of_older_parameters_and_the_run_resumes_in_one_process(tmp_path):
    run_dir = tmp_path / "a3c"
    options = ["--env", "CartPole-v1", "--preset", "cartpole", "--torch-threads", "1", "--no-progress", "--checkpoint-every", "20",
               "--run-dir", str(run_dir)]
    assert main(["train", "a3c", *options, "--actors", "2", "--steps", "3000"]) == 0
    rows = metric_rows(run_dir)
    staleness = [float(row["train/gradient_staleness"]) for row in rows]
    assert sum(staleness) / len(staleness) >= 0.5, "with two actor-learners most gradients meet parameters the other has moved"
    assert all(float(row["time/actor_sps"]) > 0 for row in rows)
    saved = load_checkpoint(run_dir / "checkpoint.pt")
    assert saved["step"] >= 3000 and saved["algorithm"]["optimizer"]["state"]
    assert main(["train", "a3c", *options, "--actors", "0", "--steps", "3600", "--resume"]) == 0
    assert load_checkpoint(run_dir / "checkpoint.pt")["step"] >= 3600


@pytest.mark.parametrize("extra,message", [
    (["--normalize-observation"], "normalize_observation needs actors 0: each Ray actor would keep statistics of its own"),
    (["--intrinsic", "apt"], "intrinsic apt needs actors 0: Ray actors do not run reward plug-ins"),
])
def test_what_ray_actors_cannot_do_is_refused(tmp_path, capsys, extra, message):
    assert main(["train", "a3c", "--actors", "2", "--no-progress", "--run-dir", str(tmp_path / "bad"), *extra]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "bad").exists()


@pytest.mark.parametrize("tensor", [
    torch.randn(40, 4), torch.arange(6).reshape(2, 3).t(), torch.tensor([True, False]), torch.randint(0, 255, (3, 2), dtype=torch.uint8),
    torch.tensor(2.5), torch.ones(3, requires_grad=True), torch.randn(5).bfloat16(),
], ids=["float32", "int64-transposed", "bool", "uint8", "scalar", "requires-grad", "bfloat16"])
def test_tensors_travel_as_arrays_and_arrive_as_writable_copies(tensor):
    wire = pickle.loads(pickle.dumps(tensor_to_wire(tensor)))
    assert isinstance(wire, np.ndarray) == (tensor.dtype != torch.bfloat16), "a dtype numpy lacks keeps torch's own pickling"
    if isinstance(wire, np.ndarray):
        wire.flags.writeable = False  # as Ray hands it over
    arrived = tensor_from_wire(wire)
    assert arrived.dtype == tensor.dtype and arrived.shape == tensor.shape and torch.equal(arrived, tensor.detach())
    assert not arrived.requires_grad
    arrived.copy_(torch.ones_like(arrived))  # the receiver's own to write: Ray's buffer stays as it came
    assert torch.equal(tensor_from_wire(wire) if isinstance(wire, np.ndarray) else tensor, tensor.detach())
