"""Data-parallel training (torchrun, gloo on CPU): two ranks, each with half of a batch, end an update where one
process with the whole batch does (PPO, PPG with its auxiliary phase, APT's contrastive step); normalisers combine
across ranks; a run's ranks write one run directory, resume their step count and RNG streams, and see different
episodes."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from voidrl.algos import PPG, PPO, PPGConfig, PPOConfig
from voidrl.cli import main
from voidrl import collective
from voidrl.intrinsic.apt import APTConfig, APTReward
from voidrl.io.checkpoint import load_checkpoint
from voidrl.math.running_stats import RunningMeanStd
from voidrl.rollout.storage import RolloutStorage
from voidrl.training.loop import merge_episodes
from tests.test_ppg import DISCRETE
from tests.test_ppo import random_rollout

T, N = 16, 4
"""The whole rollout: T steps of N environments; each of the two ranks holds N / 2 of them."""
FRAMES = (2, 12, 12)


def env_slice(storage: RolloutStorage, envs: slice) -> RolloutStorage:
    """The rollout of environments ``envs`` alone, as a rank that stepped only those would hold it."""
    part = RolloutStorage(storage.num_steps, len(range(storage.num_envs)[envs]), storage.obs.shape[2:], storage.obs.dtype,
                          storage.actions.shape[2:], storage.actions.dtype, state_shape=storage.lstm_hidden.shape[2:],
                          value_heads=storage.value_heads)
    for name in ("obs", "actions", "log_probs", "values", "next_values", "rewards", "intrinsic_rewards",
                 "terminated", "truncated", "valid", "lstm_hidden", "lstm_cell", "episode_starts"):
        getattr(part, name).copy_(getattr(storage, name)[:, envs])
    part.last_obs.copy_(storage.last_obs[envs])
    return part


def ppo(share: int) -> PPO:
    """PPO whose one minibatch per epoch is the 1/share of the rollout a process holds."""
    torch.manual_seed(0)
    return PPO(PPOConfig(num_steps=T, minibatch_size=T * N // share, epochs=3, learning_rate=1e-3), (5,), DISCRETE)


def recurrent_ppo(share: int) -> PPO:
    """Recurrent PPO (an LSTM of 8 for the actor and one for the critic, sequences of 8 steps) whose one minibatch per
    epoch is every sequence of the 1/share of the rollout a process holds."""
    torch.manual_seed(0)
    return PPO(PPOConfig(num_steps=T, minibatch_size=T * N // share, epochs=3, learning_rate=1e-3, memory="lstm", lstm_size=8,
                         sequence_length=8), (5,), DISCRETE)


def recurrent_rollout() -> RolloutStorage:
    """``random_rollout`` with the LSTM states each step began with and the episode starts they imply."""
    rollout = random_rollout(T=T, N=N, seed=3)
    recurrent = RolloutStorage(T, N, (5,), torch.float32, (), torch.long, state_shape=(2, 8))
    for name in ("obs", "actions", "log_probs", "values", "next_values", "rewards", "terminated", "truncated"):
        getattr(recurrent, name).copy_(getattr(rollout, name))
    g = torch.Generator().manual_seed(5)
    recurrent.lstm_hidden.copy_(torch.randn(T, N, 2, 8, generator=g) * 0.1)
    recurrent.lstm_cell.copy_(torch.randn(T, N, 2, 8, generator=g) * 0.1)
    recurrent.episode_starts[1:] = rollout.terminated[:-1] | rollout.truncated[:-1]
    return recurrent


def ppg(share: int) -> PPG:
    """PPG with an auxiliary phase after every rollout, chunked gradient accumulation, one minibatch per epoch."""
    torch.manual_seed(0)
    return PPG(PPGConfig(num_steps=T, minibatch_size=T * N // share, aux_minibatch_size=T * N // share, epochs=2,
                         policy_iterations=1, aux_epochs=2, chunk_size=8, learning_rate=1e-3), (5,), DISCRETE)


def apt() -> APTReward:
    """APT with a learning rate of 1e-5: Adam moves every element by up to its learning rate whatever the size of
    its gradient, so an element whose gradient is rounding noise (1e-10) may differ by the learning rate; at 1e-5
    that stays within the 1e-6 asked of the parameters (the gradients themselves are compared too)."""
    torch.manual_seed(0)
    return APTReward(APTConfig(contrastive_batch_size=8, encoder_learning_rate=1e-5), FRAMES)


def contrastive_batch() -> tuple[torch.Tensor, list[tuple[torch.Tensor, torch.Tensor]]]:
    """16 frames and their two views' parameters (shift on every sample, brightness 0.1)."""
    g = torch.Generator().manual_seed(7)
    frames = torch.randint(0, 256, (16, *FRAMES), dtype=torch.uint8, generator=g)
    views = [(torch.randint(0, 3, (16, 2), generator=g), (torch.rand(16, generator=g) - 0.5) * 0.2) for _ in range(2)]
    return frames, views


def apt_tensors(plugin: APTReward) -> torch.Tensor:
    return torch.cat([p.detach().reshape(-1) for p in (*plugin.encoder.parameters(), *plugin.head.parameters(),
                                                       plugin.bilinear, *plugin.target_encoder.parameters())])


def updated_parameters(share: int, rank: int) -> dict[str, torch.Tensor]:
    """Every learner's parameters after one update on this process's 1/share of the data (rank ``rank``)."""
    rollout = random_rollout(T=T, N=N, seed=3)
    envs = slice(rank * N // share, (rank + 1) * N // share)
    out = {}
    for name, make, data in (("ppo", ppo, rollout), ("ppg", ppg, rollout), ("ppo-lstm", recurrent_ppo, recurrent_rollout())):
        algo = make(share)
        algo.update(env_slice(data, envs), progress=0.0)
        out[name] = torch.cat([p.detach().reshape(-1) for p in algo.policy.parameters()])
    plugin = apt()
    frames, views = contrastive_batch()
    rows = slice(rank * 16 // share, (rank + 1) * 16 // share)
    plugin.contrastive_step(frames[rows], [(offsets[rows], deltas[rows]) for offsets, deltas in views])
    out["apt"] = apt_tensors(plugin)
    out["apt_gradient"] = plugin.parameters.flat.grad.clone()
    return out


def rank_worker(rank: int, store: str, out_dir: str) -> None:
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=2)
    try:
        results = updated_parameters(2, rank)
        # normalisers: each rank updates with its own batch; both end with the statistics of the union
        stats = RunningMeanStd((3,))
        g = torch.Generator().manual_seed(11)
        batches = [torch.randn(5 + r, 3, generator=g) * (r + 1) + r for r in range(2)]
        stats.update(batches[rank])
        results["normaliser"] = torch.cat([stats.mean, stats.var, stats.count.reshape(1)])
        mean, variance = collective.global_moments(batches[rank])
        results["moments"] = torch.stack([mean, variance])
        results["any_process"] = torch.tensor([collective.any_process(rank == 1), collective.any_process(False)])
        torch.save(results, Path(out_dir) / f"rank{rank}.pt")
    finally:
        dist.destroy_process_group()


def run_two_ranks(tmp_path: Path, worker) -> list[dict[str, torch.Tensor]]:
    mp.start_processes(worker, args=(str(tmp_path / "store"), str(tmp_path)), nprocs=2, start_method="spawn")
    return [torch.load(tmp_path / f"rank{rank}.pt") for rank in range(2)]


@pytest.mark.slow
def test_two_ranks_with_half_the_batch_each_end_where_one_process_with_all_of_it_does(tmp_path):
    ranks = run_two_ranks(tmp_path, rank_worker)
    whole = updated_parameters(1, 0)
    for name in ("ppo", "ppg", "ppo-lstm", "apt", "apt_gradient"):
        for rank in ranks:
            assert torch.allclose(rank[name], whole[name], rtol=0, atol=1e-6), name
        before = {"ppo": ppo, "ppg": ppg, "ppo-lstm": recurrent_ppo}.get(name)
        if before is not None:  # the update moved the parameters, by more than the tolerance
            initial = torch.cat([p.detach().reshape(-1) for p in before(1).policy.parameters()])
            assert (whole[name] - initial).abs().max() > 1e-3
    # the halves alone (no all-reduce) would not have matched
    alone = updated_parameters(2, 0)
    assert all((alone[name] - whole[name]).abs().max() > 1e-4 for name in ("ppo", "ppg", "ppo-lstm"))
    assert (alone["apt_gradient"] - whole["apt_gradient"]).abs().max() > 1e-3

    g = torch.Generator().manual_seed(11)
    union = torch.cat([torch.randn(5 + r, 3, generator=g) * (r + 1) + r for r in range(2)])
    reference = RunningMeanStd((3,))
    reference.update(union)
    expected = torch.cat([reference.mean, reference.var, reference.count.reshape(1)])
    for rank in ranks:
        assert torch.allclose(rank["normaliser"], expected, atol=1e-12)
        assert torch.allclose(rank["moments"], torch.stack([union.double().mean(), union.double().var()]), atol=1e-12)
        assert rank["any_process"].tolist() == [True, False]


def test_episodes_of_every_rank_merge_in_global_step_order():
    # two ranks of 4 envs each from step 800: a local step k after 800 is the run's 2k-th
    rank0 = ([804, 812], [1.0, 2.0], [10, 20])
    rank1 = ([804, 808], [3.0, 4.0], [30, 40])
    assert merge_episodes([rank0, rank1], 800) == ([808, 808, 816, 824], [1.0, 3.0, 4.0, 2.0], [10, 30, 40, 20])
    assert merge_episodes([rank0], 800) == rank0


PPO_RUN = ["--env", "CartPole-v1", "--num-envs", "2", "--num-steps", "64", "--minibatch-size", "32", "--epochs", "2",
           "--checkpoint-every", "1", "--torch-threads", "1", "--no-progress"]


def torchrun(*args: str) -> subprocess.Popen:
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2", "-m", "voidrl", *args]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONFAULTHANDLER": "1"}  # an abort prints every thread's Python stack
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, start_new_session=True)


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.slow
def test_a_two_rank_run_writes_one_run_directory_stops_on_sigterm_and_resumes(tmp_path, capsys):
    run_dir = tmp_path / "run"
    process = torchrun("train", "ppo", *PPO_RUN, "--steps", "200000", "--run-dir", str(run_dir))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(rows(run_dir / "metrics.csv") if (run_dir / "metrics.csv").exists() else []) < 3:
        time.sleep(0.5)
    os.killpg(process.pid, signal.SIGTERM)
    output, _ = process.communicate(timeout=120)
    assert "stopped by SIGTERM" in output, output
    assert output.count("stopped by SIGTERM") == 1  # rank 0 alone speaks
    stopped = load_checkpoint(run_dir / "checkpoint.pt")
    assert stopped["world_size"] == 2 and len(stopped["rank_states"]) == 1
    assert stopped["step"] % 256 == 0 and stopped["step"] >= 3 * 256  # 2 ranks x 2 envs x 64 steps per update
    rank1 = stopped["rank_states"][0]
    assert rank1["step"] == stopped["step"]
    assert not torch.equal(rank1["rng"]["torch"], stopped["rng"]["torch"])  # each rank its own stream
    for key, value in stopped["algorithm"]["policy"].items():  # one model on both ranks
        assert torch.equal(value, rank1["algorithm"]["policy"][key]), key

    assert main(["train", "ppo", *PPO_RUN, "--steps", "400000", "--run-dir", str(run_dir), "--resume"]) == 2
    assert "was trained by 2 process(es); resume it with as many (torchrun --nproc-per-node 2), not 1" in capsys.readouterr().err

    resumed = torchrun("train", "ppo", *PPO_RUN, "--steps", str(stopped["step"] + 512), "--run-dir", str(run_dir), "--resume")
    output, _ = resumed.communicate(timeout=120)
    assert resumed.returncode == 0, output
    final = load_checkpoint(run_dir / "checkpoint.pt")
    assert final["step"] == stopped["step"] + 512
    assert sorted(path.name for path in run_dir.iterdir()) == [".lock", "checkpoint.pt", "config.json", "episodes.csv", "metrics.csv",
                                                              "tensorboard"]
    steps = [int(row["step"]) for row in rows(run_dir / "metrics.csv")]
    assert steps == list(range(256, final["step"] + 1, 256))  # one row per update, none twice
    episode_steps = [int(row["step"]) for row in rows(run_dir / "episodes.csv")]
    assert episode_steps == sorted(episode_steps) and episode_steps[-1] <= final["step"]


@pytest.mark.slow
def test_weights_from_another_environment_id_are_warned_about_by_rank_0_alone(tmp_path):
    assert main(["train", "ppo", *PPO_RUN, "--steps", "256", "--run-dir", str(tmp_path / "pre")]) == 0
    process = torchrun("finetune", "ppo", "--from", str(tmp_path / "pre" / "checkpoint.pt"), *PPO_RUN, "--env", "CartPole-v0",
                       "--steps", "256", "--run-dir", str(tmp_path / "fine"))
    output, _ = process.communicate(timeout=120)
    assert process.returncode == 0, output
    assert output.count("was trained on CartPole-v1, and this run's environment is CartPole-v0") == 1, output


@pytest.mark.slow
def test_ranks_resume_their_own_rng_streams_and_step_different_episodes(tmp_path):
    mp.start_processes(resume_worker, args=(str(tmp_path / "store"), str(tmp_path)), nprocs=2, start_method="spawn")
    saved = [torch.load(tmp_path / f"resume{rank}.pt") for rank in range(2)]
    for rank in saved:
        assert torch.equal(rank["rng_after_resume"], rank["rng_at_save"])
        assert rank["step_after_resume"] == 256 and rank["final_step"] == 512
    assert not torch.equal(saved[0]["rng_at_save"], saved[1]["rng_at_save"])
    assert not torch.equal(saved[0]["first_obs"], saved[1]["first_obs"])  # each rank its own environment seeds


def resume_worker(rank: int, store: str, out_dir: str) -> None:
    from voidrl.seeding import env_seed
    from voidrl.training.loop import Trainer
    from voidrl.training.presets import make_config

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=2)
    try:
        def config(steps):
            return make_config("ppo", None, env="CartPole-v1", num_envs=2, num_steps=64, minibatch_size=32, epochs=1,
                               steps=steps, run_dir=f"{out_dir}/run", progress=False, torch_threads=1)
        trainer = Trainer(config(256))
        first_obs = trainer.env.reset(env_seed(trainer.seed, 0)).clone()
        trainer.train()
        rng_at_save = torch.get_rng_state()
        resumed = Trainer(config(512), resume=True)
        result = {"rng_at_save": rng_at_save, "rng_after_resume": torch.get_rng_state(), "step_after_resume": resumed.step,
                  "first_obs": first_obs}
        resumed.train()
        result["final_step"] = resumed.step
        torch.save(result, Path(out_dir) / f"resume{rank}.pt")
    finally:
        dist.destroy_process_group()


def test_bad_data_parallel_settings_are_refused_in_one_line(tmp_path):
    process = torchrun("train", "r2d2", "--env", "CartPole-v1", "--steps", "1000", "--run-dir", str(tmp_path / "r"), "--no-progress")
    output, _ = process.communicate(timeout=120)
    assert process.returncode != 0
    assert output.count("torchrun: r2d2 cannot train data-parallel; choose one of ppo, ppg, a2c") == 1  # from rank 0 alone
    assert not (tmp_path / "r").exists()


@pytest.mark.slow
def test_a_rank_that_dies_ends_the_group_in_one_line_and_the_run_resumes(tmp_path):
    run_dir = tmp_path / "run"
    process = torchrun("train", "ppo", *PPO_RUN, "--steps", "200000", "--checkpoint-every", "2", "--run-dir", str(run_dir))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (run_dir / "checkpoint.pt").exists():
        time.sleep(0.5)
    workers = subprocess.run(["pgrep", "-P", str(process.pid)], capture_output=True, text=True).stdout.split()
    assert len(workers) == 2
    os.kill(int(workers[-1]), signal.SIGKILL)
    output, _ = process.communicate(timeout=120)
    assert process.returncode != 0
    assert "another process of the data-parallel group failed" in output and "exitcode  : -9" in output, output
    stopped = load_checkpoint(run_dir / "checkpoint.pt")["step"]
    resumed = torchrun("train", "ppo", *PPO_RUN, "--steps", str(stopped + 256), "--checkpoint-every", "2", "--run-dir",
                       str(run_dir), "--resume")
    output, _ = resumed.communicate(timeout=120)
    assert resumed.returncode == 0, output
    assert load_checkpoint(run_dir / "checkpoint.pt")["step"] == stopped + 256


@pytest.mark.parametrize("command", [
    ["train", "ppo", *PPO_RUN, "--steps", "1024"],
    ["train", "ppo", "--env", "voidrl/CartPoleNoVelocity-v1", "--preset", "cartpole-memory", "--num-envs", "2", "--num-steps", "64",
     "--minibatch-size", "64", "--torch-threads", "1", "--no-progress", "--steps", "1024"],
    ["pretrain", "ppg", "--env", "MinAtar/Breakout-v1", "--num-envs", "2", "--num-steps", "32", "--policy-iterations", "2",
     "--contrastive-start", "32", "--contrastive-batch-size", "16", "--torch-threads", "1", "--no-progress", "--steps", "512"],
], ids=["ppo", "ppo-lstm", "ppg-apt"])
@pytest.mark.slow
def test_a_two_rank_run_is_the_same_run_twice(tmp_path, command):
    """Same seed, same run, data-parallel too: the all-reduced gradients of two ranks are summed in one order."""
    for name in ("first", "second"):
        process = torchrun(*command, "--seed", "5", "--run-dir", str(tmp_path / name))
        output, _ = process.communicate(timeout=300)
        assert process.returncode == 0, output
    first, second = tmp_path / "first", tmp_path / "second"
    assert (first / "episodes.csv").read_text() == (second / "episodes.csv").read_text()
    learning = [[{k: v for k, v in row.items() if not k.startswith(("time/", "sys/"))} for row in rows(run / "metrics.csv")]
                for run in (first, second)]
    assert learning[0] == learning[1] and len(learning[0]) >= 2


def test_a_group_failure_is_reported_while_the_stop_handlers_still_hold_off_torchruns_sigterm(tmp_path, monkeypatch, capsys):
    """torchrun sends the surviving ranks SIGTERM as soon as it sees one die; a rank that said so only after its
    stop handlers were gone (on the way out through the logger's and the environments' closing) was killed by that
    SIGTERM's default action, silently (seen 2 times in 50 runs of this file on a loaded machine)."""
    from voidrl.training.loop import Trainer
    from voidrl.training.signals import GracefulStop

    seen = {}

    def lost_peer(self, logger, bar, stop, calls):
        raise RuntimeError("[../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer [127.0.0.1]:1234")

    def report(error):
        handler = signal.getsignal(signal.SIGTERM)
        seen["handler installed"] = getattr(handler, "__func__", None) is GracefulStop._handle
        return collective.GroupFailed("Connection closed by peer")

    monkeypatch.setattr(Trainer, "_loop", lost_peer)
    monkeypatch.setattr(collective, "is_group_failure", lambda error: "/gloo/" in str(error))
    monkeypatch.setattr(collective, "report_group_failure", report)
    assert main(["train", "ppo", "--env", "CartPole-v1", "--steps", "2048", "--no-progress", "--run-dir", str(tmp_path / "r")]) == 1
    assert seen == {"handler installed": True}
    assert "Traceback" not in capsys.readouterr().err


def test_a_torchrun_rank_notes_a_stop_signal_before_its_run_starts_and_the_run_honours_it(monkeypatch):
    """A rank that refuses an option exits at once; torchrun then SIGTERMs the others, and rank 0, the one that says
    the refusal, died of it before saying it (seen once in 50 runs of this file on a loaded machine). Held, the
    signal is noted, and a run that then starts stops at its first safe point."""
    from voidrl.training import signals

    monkeypatch.setattr(signals, "_held", [])
    before = {signum: signal.getsignal(signum) for signum in signals.STOP_SIGNALS}
    try:
        signals.hold_stop_signals()
        os.kill(os.getpid(), signal.SIGTERM)  # would end this process by default
        assert signals._held == [signal.SIGTERM]
        with signals.GracefulStop() as stop:
            assert stop.requested and stop.signum == signal.SIGTERM
        assert signal.getsignal(signal.SIGTERM) not in (signal.SIG_DFL, before[signal.SIGTERM])  # the hold again
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)


@pytest.mark.parametrize("faulthandler_on", [True, False], ids=["faulthandler", "without"])
def test_a_process_held_up_after_a_stop_signal_says_so_and_ends_itself(faulthandler_on):
    """A held stop signal is acted on only when the main thread runs Python; a process blocked in a call that never
    returns (here a sleep, in a rank a collective waiting for a peer that is gone) ends itself after ``give_up_after``
    seconds, saying so, with every thread's stack where faulthandler is on."""
    program = ("import os, signal, sys, time\n"
               "from voidrl.training.signals import hold_stop_signals\n"
               "hold_stop_signals(give_up_after=0.5, say=lambda seconds: print(f'held up {seconds} s', file=sys.stderr))\n"
               "os.kill(os.getpid(), signal.SIGTERM)\n"
               "def held_up():\n"
               "    time.sleep(20)\n"
               "held_up()\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONFAULTHANDLER"} | ({"PYTHONFAULTHANDLER": "1"} if faulthandler_on else {})
    started = time.monotonic()
    finished = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=env, timeout=60)
    assert finished.returncode == 128 + signal.SIGTERM and time.monotonic() - started < 10, finished.stderr
    assert "held up 0.5 s" in finished.stderr
    assert ("held_up" in finished.stderr) == faulthandler_on, finished.stderr


def test_a_rank_waiting_for_a_peer_that_died_before_joining_ends_itself_with_one_line(tmp_path):
    """Rank 1 fails before it joins the group (as a CUDA set-up error made it on a one-GPU machine); rank 0 waits in the
    rendezvous, where torchrun's SIGTERM could not reach it: it was killed 30 s later, silently. Now it ends itself
    (the grace shortened here to 2 s) with the line that names the cause."""
    entry, joining = tmp_path / "entry.py", tmp_path / "rank 0 joins"
    entry.write_text("import os, sys, time\n"
                     f"joining = {str(joining)!r}\n"
                     "if os.environ['RANK'] == '1':  # fails once rank 0 holds its signals and joins the group\n"
                     "    while not os.path.exists(joining):\n"
                     "        time.sleep(0.05)\n"
                     "    sys.exit(1)\n"
                     "import voidrl.cli\n"
                     "from voidrl import collective\n"
                     "join = collective.init_from_environment\n"
                     "def announced_join():\n"
                     "    open(joining, 'w').close()\n"
                     "    join()\n"
                     "collective.init_from_environment = announced_join\n"
                     "voidrl.cli.TORCHRUN_STOP_GRACE_S = 7\n"
                     "sys.argv = ['voidrl', *sys.argv[1:]]\n"
                     "voidrl.cli.run()\n")
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2", str(entry), "train", "ppo",
               *PPO_RUN, "--steps", "1024", "--run-dir", str(tmp_path / "run")]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    started = time.monotonic()
    finished = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    output = finished.stdout + finished.stderr
    assert finished.returncode != 0 and time.monotonic() - started < 25, output
    assert "voidrl: rank 0: still waiting on the data-parallel group 2 s after torchrun's stop signal: another process of the " \
           "data-parallel group failed" in output, output
    assert "exitcode  : 143" in output and "exitcode  : -9" not in output, output
