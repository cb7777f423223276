"""Checkpoint files: atomic writes, refusal of unsafe or corrupt content."""

import os
import pickle

import pytest
import torch

from voidrl.io.checkpoint import CheckpointError, load_checkpoint, save_checkpoint


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


def test_config_written_with_the_old_network_name_still_loads():
    from voidrl.config import TrainConfig
    from voidrl.train.presets import make_config

    stored = make_config("ppg", "atari").to_dict()
    stored["algo_config"]["network"] = "thesis"
    assert TrainConfig.from_dict(stored).algo_config.network == "dqn2013"


def test_renamed_presets_keep_their_old_names(tmp_path, capsys):
    from voidrl.cli import main
    from voidrl.train.presets import make_config

    assert make_config("ppg", "thesis", env="ALE/MsPacman-v5").to_dict() == make_config("ppg", "atari", env="ALE/MsPacman-v5").to_dict()
    assert make_config("ppg", env="ALE/MsPacman-v5").to_dict() == make_config("ppg", "atari", env="ALE/MsPacman-v5").to_dict()
    old, new = (make_config("ppg", name, env="ALE/MsPacman-v5").to_dict() for name in ("thesis-pretrain", "pretrain-nt-xent"))
    assert old == new and new["intrinsic_config"]["contrastive_loss"] == "nt-xent"
    assert main(["train", "ppg", "--preset", "thesis", "--steps", "-1", "--run-dir", str(tmp_path / "bad")]) == 2
    assert "steps" in capsys.readouterr().err  # the old name passes the parser; the bad step count is what is refused
