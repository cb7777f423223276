"""Torch threads: chosen from the CPUs this process may use and the network, and given back afterwards."""

import os
import subprocess
import sys

import pytest
import torch

import voidrl
from voidrl.training import threads
from voidrl.training.loop import Trainer


def test_mlps_get_one_thread_and_convolutions_every_available_cpu_unless_niced(monkeypatch):
    monkeypatch.setattr(threads, "available_cpus", lambda: 6)
    monkeypatch.setattr(threads.os, "getpriority", lambda which, who: 0)
    assert threads.default_threads((4,)) == 1  # CartPole's MLP
    assert threads.default_threads((4, 10, 10)) == 6  # MinAtar
    assert threads.default_threads((4, 84, 84)) == 6  # Atari
    monkeypatch.setattr(threads.os, "getpriority", lambda which, who: 19)  # started with nice: a background job
    assert threads.default_threads((4,)) == 1
    assert threads.default_threads((4, 84, 84)) == 1


def test_a_process_started_with_nice_counts_as_niced():
    command = [sys.executable, "-c", "from voidrl.training.threads import niced; print(niced())"]
    assert subprocess.run(["nice", "-n", "5", *command], capture_output=True, text=True, check=True).stdout.strip() == "True"


def test_available_cpus_honours_a_cgroup_quota(monkeypatch, tmp_path):
    monkeypatch.setattr(threads, "CGROUP_CPU_MAX", tmp_path / "cpu.max")
    monkeypatch.setattr(threads.os, "sched_getaffinity", lambda pid: set(range(8)))
    (tmp_path / "cpu.max").write_text("150000 100000\n")
    assert threads.available_cpus() == 2
    (tmp_path / "cpu.max").write_text("max 100000\n")
    assert threads.available_cpus() == 8


def test_training_an_mlp_uses_one_thread_and_restores_the_callers_setting(tmp_path, monkeypatch):
    seen = []
    original = Trainer._loop

    def spy(self, *args):
        seen.append(torch.get_num_threads())
        return original(self, *args)

    monkeypatch.setattr(Trainer, "_loop", spy)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        voidrl.train("ppo", steps=256, num_envs=2, num_steps=128, run_dir=str(tmp_path / "auto"), progress=False)
        voidrl.train("ppo", steps=256, num_envs=2, num_steps=128, run_dir=str(tmp_path / "two"), progress=False,
                     torch_threads=2)
        assert seen == [1, 2]
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_the_networks_start_the_same_whatever_thread_count_the_process_has(tmp_path):
    """An orthogonal initialisation's QR gives other bits with 1 and 2 threads (a 64 x 64 layer already): the networks
    are built with the run's count, so the same run starts alike on a 2- and a 16-CPU machine."""
    from voidrl.training.presets import make_config
    from voidrl.training.runs import make_trainer

    before, weights = torch.get_num_threads(), []
    try:
        for process_threads in (1, 2):
            torch.set_num_threads(process_threads)
            trainer = make_trainer(make_config("ppo", None, env="CartPole-v1", seed=0, torch_threads=1,
                                               run_dir=str(tmp_path / f"process-threads-{process_threads}")))
            weights.append(trainer.algo.policy.state_dict())
            trainer.close()
    finally:
        torch.set_num_threads(before)
    assert weights[0].keys() == weights[1].keys()
    assert all(torch.equal(weights[0][name], weights[1][name]) for name in weights[0])


def readings(*clocks: threads.CpuClocks):
    """A fake ``read_cpu_clocks`` giving ``clocks`` one after the other."""
    return iter(clocks).__next__


def clocks(busy: float, own: float, wall: float) -> threads.CpuClocks:
    return threads.CpuClocks(busy=busy, own=own, wall=wall, cpus=2)


def test_the_count_is_chosen_once_recorded_and_never_follows_the_load(tmp_path, monkeypatch, capsys):
    """Another process's load changes nothing computed: the run keeps the count chosen from the machine's CPUs (recorded
    in config.json) and only says that it will wait on the busy ones. (The thread governor before 2026-11-27 chose 1
    here, so the same command gave another run beside another process.)"""
    import functools
    import json

    from voidrl.training import loop

    monkeypatch.setattr(threads, "available_cpus", lambda: 2)
    monkeypatch.setattr(loop, "default_threads", lambda obs_shape: 2)
    busy_beside = readings(clocks(busy=100.0, own=5.0, wall=10.0), clocks(busy=100.4, own=5.0, wall=10.25))
    monkeypatch.setattr(loop, "busy_cpus_warning", functools.partial(threads.busy_cpus_warning, seconds=0, read=busy_beside))
    seen = []
    original = torch.set_num_threads
    monkeypatch.setattr(torch, "set_num_threads", lambda count: seen.append(count) or original(count))
    before = torch.get_num_threads()
    voidrl.train("ppo", steps=512, num_envs=2, num_steps=128, run_dir=str(tmp_path / "run"), progress=False)
    assert json.loads((tmp_path / "run" / "config.json").read_text())["run"]["torch_threads"] == 2
    assert seen == [2, before, 2, before]  # set for building the networks and for the run, the caller's count given back
    assert "other processes keep about 1.6 of the 2 CPUs this run may use busy" in capsys.readouterr().err


def test_a_busy_machine_gets_a_warning_not_fewer_threads():
    """Over 0.25 s on 2 CPUs: another process spinning on one CPU keeps 0.25 CPU-seconds busy (1.0 CPU), and a second
    process at half a CPU 0.125 more, while this process waits."""
    one_other = readings(clocks(busy=100.0, own=5.0, wall=10.0), clocks(busy=100.25, own=5.0, wall=10.25))
    assert ("other processes keep about 1.0 of the 2 CPUs this run may use busy; its 2 torch threads"
            in threads.busy_cpus_warning(2, seconds=0, read=one_other))
    one_and_a_half = readings(clocks(busy=100.0, own=5.0, wall=10.0), clocks(busy=100.375, own=5.0, wall=10.25))
    assert "about 1.5 of the 2 CPUs" in threads.busy_cpus_warning(2, seconds=0, read=one_and_a_half)
    assert threads.busy_cpus_warning(1, seconds=0, read=readings()) is None  # no measurement: it has no fewer to take


def test_an_idle_machine_or_the_runs_own_work_gets_no_warning():
    """Issue 65: 'other processes keep about 1.7 of this machine's 2 CPUs busy' with no other process running, read from
    the load average, which still counted the run's own earlier work. Its own threads' CPU time is not another's."""
    idle = readings(clocks(busy=100.0, own=5.0, wall=10.0), clocks(busy=100.02, own=5.0, wall=10.25))
    assert threads.busy_cpus_warning(2, seconds=0, read=idle) is None
    own_threads_spinning = readings(clocks(busy=100.0, own=5.0, wall=10.0), clocks(busy=100.5, own=5.48, wall=10.25))
    assert threads.busy_cpus_warning(2, seconds=0, read=own_threads_spinning) is None
    assert threads.other_processes_cpus(0, read=readings(clocks(100.0, 5.0, 10.0), clocks(100.5, 5.48, 10.25))) == (
        pytest.approx(0.08), 2)
    assert threads.busy_cpus_warning(2, seconds=0, read=lambda: None) is None  # no /proc/stat: nothing said


def test_a_spinning_child_process_is_measured_as_another_process():
    """Real clocks: a child spinning through the whole window counts as another process's CPU (everything else busy on
    the machine does too, so the measurement can only grow), and this process's own sleep counts nothing."""
    if threads.read_cpu_clocks() is None:
        pytest.skip("no /proc/stat")
    spinner = subprocess.Popen([sys.executable, "-c", "print(flush=True)\nwhile True: pass"], stdout=subprocess.PIPE)
    try:
        spinner.stdout.readline()  # spinning from here on
        others, cpus = threads.other_processes_cpus(0.3)
    finally:
        spinner.kill()
        spinner.wait()
    assert cpus == len(os.sched_getaffinity(0))
    assert 0.5 <= others <= cpus
