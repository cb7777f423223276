"""Checkpoint files: atomic writes, refusal of unsafe or corrupt content."""

import errno
import os
import pickle
import shutil

import pytest
import torch

from voidrl.io import checkpoint
from voidrl.io.checkpoint import CheckpointError, load_checkpoint, save_checkpoint, write_atomically


class Exploit:
    """Unpickling this would create a marker file: proof that code ran."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_round_trip_nested_state(tmp_path):
    payload = {"step": 3, "nested": {"weights": torch.arange(4.0), "names": ["a", "b"]}, "none": None}
    save_checkpoint(tmp_path / "c.pt", payload)
    loaded = load_checkpoint(tmp_path / "c.pt")
    assert loaded["step"] == 3 and loaded["nested"]["names"] == ["a", "b"] and loaded["none"] is None
    assert torch.equal(loaded["nested"]["weights"], torch.arange(4.0))
    assert [p.name for p in tmp_path.iterdir()] == ["c.pt"]  # no temporary file left behind


@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002])
def test_a_written_file_has_the_mode_of_any_file_the_process_makes(tmp_path, mask):
    """Not mkstemp's owner-only 0600: a checkpoint or an exported policy reads like the run's other files."""
    previous = os.umask(mask)
    try:
        assert checkpoint.process_umask() == mask
        save_checkpoint(tmp_path / "c.pt", {"step": 1})
        (tmp_path / "plain.txt").write_text("x")
    finally:
        os.umask(previous)
    modes = {name: (tmp_path / name).stat().st_mode & 0o777 for name in ("c.pt", "plain.txt")}
    assert modes["c.pt"] == modes["plain.txt"] == 0o666 & ~mask


def test_crafted_checkpoint_cannot_run_code(tmp_path):
    marker = tmp_path / "pwned"
    path = tmp_path / "evil.pt"
    torch.save({"format": "voidrl-checkpoint-v1", "step": Exploit(str(marker))}, path)
    with pytest.raises(CheckpointError, match="refused: it asks to build a .*open object"):
        load_checkpoint(path)
    assert not marker.exists()


def test_plain_pickle_is_refused(tmp_path):
    marker = tmp_path / "pwned"
    path = tmp_path / "evil.pkl"
    path.write_bytes(pickle.dumps(Exploit(str(marker))))
    with pytest.raises(CheckpointError, match="corrupt or not a checkpoint"):
        load_checkpoint(path)
    assert not marker.exists()


@pytest.mark.parametrize("content", [b"", b"not a checkpoint at all", None])
def test_corrupt_or_truncated_files_raise_one_clear_error(tmp_path, content):
    path = tmp_path / "bad.pt"
    if content is None:  # a real checkpoint cut in half, as by a crash in a naive writer
        save_checkpoint(path, {"weights": torch.randn(1000)})
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2])
    else:
        path.write_bytes(content)
    with pytest.raises(CheckpointError, match="corrupt|not a"):
        load_checkpoint(path)


def test_foreign_torch_file_is_not_a_checkpoint(tmp_path):
    torch.save({"weights": torch.zeros(2)}, tmp_path / "other.pt")
    with pytest.raises(CheckpointError, match="not a voidrl-checkpoint-v1"):
        load_checkpoint(tmp_path / "other.pt")


def test_missing_file(tmp_path):
    with pytest.raises(CheckpointError, match="does not exist"):
        load_checkpoint(tmp_path / "nope.pt")


def test_failed_write_keeps_the_previous_checkpoint(tmp_path, monkeypatch):
    path = tmp_path / "c.pt"
    save_checkpoint(path, {"step": 1})

    def crash(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError):
        save_checkpoint(path, {"step": 2})
    assert load_checkpoint(path)["step"] == 1
    assert [p.name for p in tmp_path.iterdir()] == ["c.pt"]


def half_written_then_torch_fails(handle):
    """What torch.save does on a full disk: some bytes out, then a RuntimeError of its zip writer (not an OSError)."""
    handle.write(b"x" * 3 * 2**20)
    raise RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 501815424 vs 501815312")


@pytest.mark.parametrize("free_mb, raised", [(1, OSError), (10_000, RuntimeError)])
def test_a_write_failing_on_a_full_disk_says_so(tmp_path, monkeypatch, free_mb, raised):
    path = tmp_path / "c.pt"
    save_checkpoint(path, {"step": 1})
    usage = shutil.disk_usage(tmp_path)
    monkeypatch.setattr(checkpoint.shutil, "disk_usage", lambda where: usage._replace(free=free_mb * 2**20))
    with pytest.raises(raised) as failure:
        write_atomically(path, half_written_then_torch_fails)
    if raised is OSError:  # a full disk: named, with what was written and what is free
        assert failure.value.errno == errno.ENOSPC
        assert str(tmp_path) in str(failure.value) and "3 MB of c.pt were written" in str(failure.value)
        assert "1 MB are free" in str(failure.value) and "--resume" in str(failure.value)
    else:  # room to spare: torch's own error, unchanged
        assert "unexpected pos" in str(failure.value)
    assert load_checkpoint(path)["step"] == 1
    assert [p.name for p in tmp_path.iterdir()] == ["c.pt"]


def test_config_written_with_the_old_network_name_still_loads():
    from voidrl.config import TrainConfig
    from voidrl.training.presets import make_config

    stored = make_config("ppg", "atari").to_dict()
    stored["algo_config"]["network"] = "thesis"
    assert TrainConfig.from_dict(stored).algo_config.network == "dqn2013"


def test_renamed_presets_keep_their_old_names(tmp_path, capsys):
    from voidrl.cli import main
    from voidrl.training.presets import make_config

    assert make_config("ppg", "thesis", env="ALE/MsPacman-v5").to_dict() == make_config("ppg", "atari", env="ALE/MsPacman-v5").to_dict()
    assert make_config("ppg", env="ALE/MsPacman-v5").to_dict() == make_config("ppg", "atari", env="ALE/MsPacman-v5").to_dict()
    old, new = (make_config("ppg", name, env="ALE/MsPacman-v5").to_dict() for name in ("thesis-pretrain", "pretrain-nt-xent"))
    assert old == new and new["intrinsic_config"]["contrastive_loss"] == "nt-xent"
    assert main(["train", "ppg", "--preset", "thesis", "--steps", "-1", "--run-dir", str(tmp_path / "bad")]) == 2
    assert "steps" in capsys.readouterr().err  # the old name passes the parser; the bad step count is what is refused


def test_a_run_on_a_full_disk_stops_with_one_line_and_its_last_checkpoint(tmp_path, monkeypatch, capsys):
    from voidrl.cli import main

    run = tmp_path / "run"
    command = ["train", "a2c", "--env", "CartPole-v1", "--num-envs", "2", "--num-steps", "8", "--checkpoint-every", "2",
               "--torch-threads", "1", "--no-progress", "--run-dir", str(run)]
    assert main([*command, "--steps", "32"]) == 0
    capsys.readouterr()
    usage = shutil.disk_usage(tmp_path)
    monkeypatch.setattr(checkpoint.shutil, "disk_usage", lambda where: usage._replace(free=2**20))
    monkeypatch.setattr(checkpoint.torch, "save", lambda payload, handle: half_written_then_torch_fails(handle))
    assert main([*command, "--steps", "64", "--resume"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("voidrl: the disk holding") and "checkpoint.pt is left as it was" in err and "Traceback" not in err
    assert load_checkpoint(run / "checkpoint.pt")["step"] == 32
