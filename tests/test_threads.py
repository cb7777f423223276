"""Torch threads: chosen from the CPUs this process may use and the network, and given back afterwards."""

import torch

import voidrl
from voidrl.train import threads
from voidrl.train.loop import Trainer


def test_mlps_get_one_thread_and_convolutions_every_available_cpu(monkeypatch):
    monkeypatch.setattr(threads, "available_cpus", lambda: 6)
    assert threads.default_threads((4,)) == 1  # CartPole's MLP
    assert threads.default_threads((4, 10, 10)) == 6  # MinAtar
    assert threads.default_threads((4, 84, 84)) == 6  # Atari


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


def test_the_count_is_chosen_once_recorded_and_never_follows_the_load(tmp_path, monkeypatch, capsys):
    """Another process's load changes nothing computed: the run keeps the count chosen from the machine's CPUs (recorded
    in config.json) and only says that it will wait on the busy ones. (The thread governor before 2026-11-27 chose 1
    here, so the same command gave another run beside another process.)"""
    import json

    from voidrl.train import loop

    monkeypatch.setattr(threads, "available_cpus", lambda: 2)
    monkeypatch.setattr(loop, "default_threads", lambda obs_shape: 2)
    monkeypatch.setattr(threads.os, "getloadavg", lambda: (1.6, 0.0, 0.0))  # another process on most of both CPUs
    seen = []
    original = torch.set_num_threads
    monkeypatch.setattr(torch, "set_num_threads", lambda count: seen.append(count) or original(count))
    before = torch.get_num_threads()
    voidrl.train("ppo", steps=512, num_envs=2, num_steps=128, run_dir=str(tmp_path / "run"), progress=False)
    assert json.loads((tmp_path / "run" / "config.json").read_text())["run"]["torch_threads"] == 2
    assert seen == [2, before]  # set for the run, then the caller's count given back
    assert "other processes keep about 1.6 of this machine's 2 CPUs busy" in capsys.readouterr().err


def test_a_busy_machine_gets_a_warning_not_fewer_threads(monkeypatch):
    monkeypatch.setattr(threads, "available_cpus", lambda: 2)
    monkeypatch.setattr(threads.os, "getloadavg", lambda: (1.9, 0.0, 0.0))
    assert "other processes keep about 1.9 of this machine's 2 CPUs busy; this run's 2 torch thread(s)" in threads.busy_cpus_warning(2)
    assert threads.busy_cpus_warning(1) is None  # one of several runs sharing the machine, as advised
    monkeypatch.setattr(threads.os, "getloadavg", lambda: (0.4, 0.0, 0.0))
    assert threads.busy_cpus_warning(2) is None and threads.busy_cpus_warning(1) is None
