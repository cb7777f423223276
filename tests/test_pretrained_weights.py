"""``voidrl export --format weights``: a small file of the networks a run starts from, which --from takes as it takes
the whole checkpoint."""

import torch

from tests.cli_helpers import SMALL_PPG, pretrain_small_minatar, voidrl

FINETUNE = ["--steps", "512", "--torch-threads", "1", *SMALL_PPG]


def test_weights_hold_the_networks_alone_and_start_the_same_run_as_the_checkpoint(tmp_path):
    pretrain_small_minatar(tmp_path, 256)
    exported = voidrl("export", "--checkpoint", "pre/checkpoint.pt", "--format", "weights", "--out", "weights.pt", cwd=tmp_path)
    assert exported.returncode == 0, exported.stderr
    assert "start a run from it with --from weights.pt" in exported.stdout
    weights = torch.load(tmp_path / "weights.pt", weights_only=True)
    checkpoint = torch.load(tmp_path / "pre" / "checkpoint.pt", weights_only=True)
    assert set(weights) == {"format", "config", "step", "env", "algorithm", "intrinsic"}
    assert set(weights["algorithm"]) == {"policy"} and set(weights["intrinsic"]) == {"encoder"}  # no optimiser, no buffer
    for key, value in checkpoint["algorithm"]["policy"].items():
        assert torch.equal(weights["algorithm"]["policy"][key], value)
    assert (tmp_path / "weights.pt").stat().st_size < (tmp_path / "pre" / "checkpoint.pt").stat().st_size / 3

    for source, run_dir in (("pre/checkpoint.pt", "from-checkpoint"), ("weights.pt", "from-weights")):
        result = voidrl("finetune", "ppg", "--from", source, "--run-dir", run_dir, *FINETUNE, cwd=tmp_path)
        assert result.returncode == 0, result.stderr
    episodes = [(tmp_path / run_dir / "episodes.csv").read_text() for run_dir in ("from-checkpoint", "from-weights")]
    assert episodes[0] == episodes[1] and episodes[0].count("\n") > 2

    encoder = voidrl("finetune", "ppg", "--from", "weights.pt", "--network", "apt", "--init-parts", "apt_encoder",
                     "--run-dir", "encoder", *FINETUNE, cwd=tmp_path)
    assert encoder.returncode == 0, encoder.stderr
    compared = voidrl("compare", "ppg", "--from", "weights.pt", "--seeds", "1", "--run-dir", "cmp", *FINETUNE, cwd=tmp_path)
    assert compared.returncode == 0, compared.stderr
    assert "| measure | pre-trained (n=1) | scratch (n=1) |" in compared.stdout


def test_export_never_writes_over_the_checkpoint_it_reads(tmp_path):
    pretrain_small_minatar(tmp_path, 128)
    before = (tmp_path / "pre" / "checkpoint.pt").read_bytes()
    result = voidrl("export", "--checkpoint", "pre/checkpoint.pt", "--format", "weights", "--out", "pre/checkpoint.pt", cwd=tmp_path)
    assert result.returncode == 2 and "is the checkpoint it reads" in result.stderr
    assert (tmp_path / "pre" / "checkpoint.pt").read_bytes() == before
