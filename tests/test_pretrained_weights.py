"""``voidrl export --format weights``: a small file of the networks a run starts from, which --from takes as it takes
the whole checkpoint."""

from pathlib import Path

import pytest
import torch

from tests.cli_helpers import SMALL_PPG, pretrain_small_minatar, voidrl

pytestmark = pytest.mark.slow  # every test here trains through the command line for 15-120 s

FINETUNE = ["--steps", "512", "--torch-threads", "1", *SMALL_PPG]
ROOT = Path(__file__).resolve().parents[1]
COMMITTED = "benchmarks/results/mspacman-2026-11-28-knn-scope/pretrain/pretrained-weights.pt"
"""Issue 48's 1M-step reward-free pre-training on Ms. Pac-Man (the `pretrain` preset, novelty within the game), the networks alone."""


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


def test_the_committed_ms_pacman_weights_fine_tune_as_the_readme_shows(tmp_path):
    """The docs' line fine-tunes the committed 1M-step reward-free pre-training, with no pre-training of one's own."""
    page = (ROOT / "docs" / "pretraining.md").read_text()
    line = next(line for line in page.splitlines() if line.startswith(f"voidrl finetune ppg --from {COMMITTED}"))
    weights = torch.load(ROOT / COMMITTED, weights_only=True)
    assert set(weights["algorithm"]) == {"policy"} and weights["config"]["run"]["env"] == "ALE/MsPacman-v5"
    assert weights["step"] >= 1_000_000 and (ROOT / COMMITTED).stat().st_size < 15_000_000
    args = line.split("#")[0].split()[1:]  # the page's command, at a tiny budget here
    values = {"--from": str(ROOT / COMMITTED), "--steps": "512", "--run-dir": "ft"}
    args = [values.get(args[index - 1], arg) if index else arg for index, arg in enumerate(args)]
    result = voidrl(*args, "--num-envs", "2", "--num-steps", "256", "--policy-iterations", "1", "--torch-threads", "1",
                    "--no-progress", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "ft" / "checkpoint.pt").exists()


def test_keep_weights_keeps_each_checkpoints_networks_and_may_be_turned_on_at_resume(tmp_path):
    """128 steps an update (4 x 32), a checkpoint every 2 updates: kept at 256 and 512; the resumed run adds 768."""
    pretrain_small_minatar(tmp_path, 512, "pre")
    assert not (tmp_path / "pre" / "weights").exists()  # off by default
    resumed = voidrl("pretrain", "ppg", "--env", "MinAtar/Breakout-v1", "--steps", "768", "--contrastive-start", "64",
                     "--contrastive-batch-size", "16", "--run-dir", "pre", *SMALL_PPG, "--resume", "--keep-weights", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    kept = tmp_path / "pre" / "weights" / "step-768.pt"
    assert sorted(path.name for path in kept.parent.iterdir()) == ["step-768.pt"]
    weights = torch.load(kept, weights_only=True)
    checkpoint = torch.load(tmp_path / "pre" / "checkpoint.pt", weights_only=True)
    assert weights["step"] == checkpoint["step"] == 768 and set(weights["algorithm"]) == {"policy"}
    for key, value in checkpoint["algorithm"]["policy"].items():
        assert torch.equal(weights["algorithm"]["policy"][key], value)

    run = voidrl("pretrain", "ppg", "--env", "MinAtar/Breakout-v1", "--steps", "512", "--contrastive-start", "64",
                 "--contrastive-batch-size", "16", "--run-dir", "kept", "--checkpoint-every", "2", "--keep-weights",
                 *SMALL_PPG, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert sorted(path.name for path in (tmp_path / "kept" / "weights").iterdir()) == ["step-256.pt", "step-512.pt"]
    early, late = (torch.load(tmp_path / "kept" / "weights" / f"step-{step}.pt", weights_only=True) for step in (256, 512))
    assert (early["step"], late["step"]) == (256, 512)
    assert not all(torch.equal(early["algorithm"]["policy"][key], value) for key, value in late["algorithm"]["policy"].items())
    played = voidrl("eval", "--checkpoint", "kept/weights/step-256.pt", "--episodes", "2", cwd=tmp_path)
    assert played.returncode == 0, played.stderr
