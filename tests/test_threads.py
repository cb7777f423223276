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


def test_the_governor_leaves_the_cores_other_processes_keep_busy(monkeypatch):
    """Two CPUs: another process busy on 1.6 of them leaves one thread; when it ends, both come back."""
    monkeypatch.setattr(threads, "available_cpus", lambda: 2)
    clock = {"wall": 0.0, "cpu": 0.0}
    monkeypatch.setattr(threads.time, "monotonic", lambda: clock["wall"])
    monkeypatch.setattr(threads.time, "process_time", lambda: clock["cpu"])
    load = {"value": 1.6}
    monkeypatch.setattr(threads.os, "getloadavg", lambda: (load["value"], 0.0, 0.0))
    before = torch.get_num_threads()
    try:
        governor = threads.ThreadGovernor(2, interval=30.0)
        assert torch.get_num_threads() == 1
        clock["wall"], clock["cpu"] = 10.0, 10.0
        load["value"] = 0.9  # our own thread only
        assert governor.adjust() == 1  # not yet: the interval has not passed
        clock["wall"], clock["cpu"] = 40.0, 40.0
        assert governor.adjust() == 2
        clock["wall"], clock["cpu"] = 70.0, 100.0  # we use both cores, another process one more
        load["value"] = 3.0
        assert governor.adjust() == 1
        fixed = threads.ThreadGovernor(2, adaptive=False)
        clock["wall"] = 200.0
        assert fixed.adjust() == 2  # a count the user chose is held
    finally:
        torch.set_num_threads(before)


def test_the_governor_is_asked_during_a_collection_not_only_between_updates(tmp_path, monkeypatch):
    """An APT rollout lasts minutes: a thread count chosen under another run's load must not last it out."""
    calls = []
    original = threads.ThreadGovernor.adjust
    monkeypatch.setattr(threads.ThreadGovernor, "adjust", lambda self: calls.append(1) or original(self))
    voidrl.train("ppo", steps=256, num_envs=2, num_steps=128, run_dir=str(tmp_path / "run"), progress=False)
    assert len(calls) >= 128  # one update of 128 vector steps
