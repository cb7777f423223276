"""benchmarks/protocol.py: manifests, their seeds, and a table that refuses mixed commits and shows no interval below 3
independent units."""

import gzip
import json
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

from protocol import Manifest, table  # noqa: E402

MANIFEST = """
description = "a test"
seeds = "report"
budget = 1000
measures = ["final"]
[arms.pretrain]
command = ["pretrain", "ppg"]
seeds = [100, 101, 102]
tabled = false
[arms.finetuned]
command = ["finetune", "ppg", "--from", "{parent}/checkpoint.pt"]
parent = "pretrain"
seeds = [100, 101]
[arms.scratch]
command = ["train", "ppg"]
seeds = [100, 101, 102]
[arms.short]
command = ["train", "ppg"]
seeds = [100, 101]
[[comparisons]]
arms = ["finetuned", "scratch"]
"""


def write_run(folder: Path, returns: list[float], commit: str = "abc1234") -> None:
    folder.mkdir(parents=True)
    lines = ["step,return,length"] + [f"{100 * (i + 1)},{value},10" for i, value in enumerate(returns)]
    (folder / "episodes.csv.gz").write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    start = {"commit": commit, "changes": False, "cpu": "a CPU", "torch": "2.13.0", "python": "3.11"}
    (folder / "provenance.json").write_text(json.dumps({"starts": [start]}))


def results_of(tmp_path: Path, scratch_commit: str = "abc1234") -> tuple[Manifest, Path]:
    path = tmp_path / "demo.toml"
    path.write_text(MANIFEST)
    manifest = Manifest.read(path)
    results = tmp_path / "results"
    for parent in (100, 101, 102):
        for seed in (100, 101):
            write_run(results / "demo" / "finetuned" / f"seed{parent}-{seed}", [10.0 * parent + seed] * 3)
    for seed in (100, 101, 102):
        write_run(results / "demo" / "scratch" / f"seed{seed}", [float(seed)] * 3, scratch_commit)
    for seed in (100, 101):
        write_run(results / "demo" / "short" / f"seed{seed}", [float(seed)] * 3)
    return manifest, results


def test_table_shows_intervals_from_three_units_and_values_below(tmp_path):
    manifest, results = results_of(tmp_path)
    text = table(manifest, results)
    rows = {line.split(" | ")[0].strip("| "): line for line in text.splitlines() if line.startswith("| ")}
    assert "IQM, 95% two-level percentile bootstrap (3 parents, then their runs)" in rows["finetuned"]
    assert "IQM, 95% percentile bootstrap (3 seeds)" in rows["scratch"]
    assert "values 100.0, 101.0" in rows["short"] and "no interval below 3" in rows["short"] and "[" not in rows["short"]
    assert "commit abc1234" in text and "Report seeds" in text
    assert "- final:" in text and "difference of IQMs" in text


def test_table_refuses_mixed_commits_unless_asked_and_then_names_them(tmp_path):
    manifest, results = results_of(tmp_path, scratch_commit="def5678")
    with pytest.raises(SystemExit, match="different commits.*scratch: def5678"):
        table(manifest, results)
    text = table(manifest, results, allow_mixed_commits=True)
    assert "**Mixed commits**" in text and "scratch at def5678" in text and "finetuned at abc1234" in text


@pytest.mark.parametrize("replace,message", [
    (('seeds = [100, 101, 102]\ntabled', 'seeds = [1, 101, 102]\ntabled'), r"seeds \[1\] are not report seeds"),
    (('parent = "pretrain"', 'parent = "nothing"'), "parent 'nothing' is not an arm"),
    (('arms = ["finetuned", "scratch"]', 'arms = ["finetuned", "other"]'), r"unknown arms \['other'\]"),
    (('seeds = "report"', 'seeds = "lucky"'), "seeds must be one of tuning, report"),
])
def test_a_manifest_that_breaks_the_protocol_is_refused(tmp_path, replace, message):
    path = tmp_path / "bad.toml"
    path.write_text(MANIFEST.replace(*replace))
    with pytest.raises(SystemExit, match=message):
        Manifest.read(path)


@pytest.mark.slow
def test_run_trains_each_run_once_and_commits_its_logs_with_where_it_ran(tmp_path):
    from protocol import run

    path = tmp_path / "cartpole.toml"
    path.write_text('seeds = "tuning"\nbudget = 1024\n[arms.ppo]\ncommand = ["train", "ppo", "--env", "CartPole-v1", '
                    '"--steps", "1024", "--num-envs", "2", "--num-steps", "64"]\nseeds = [0, 1, 2]\n')
    manifest, results = Manifest.read(path), tmp_path / "results"
    run(manifest, tmp_path / "runs", 2, 1, None, results)
    folder = results / "cartpole" / "ppo" / "seed1"
    assert sorted(p.name for p in folder.iterdir()) == ["config.json", "episodes.csv.gz", "metrics.csv.gz", "provenance.json"]
    starts = json.loads((folder / "provenance.json").read_text())["starts"]
    assert len(starts) == 1 and starts[0]["commit"] and starts[0]["cpu"]
    run(manifest, tmp_path / "runs", 2, 1, None, results)  # finished runs: neither trained nor recorded again
    assert len(json.loads((tmp_path / "runs" / "cartpole" / "ppo" / "seed1" / "provenance.json").read_text())["starts"]) == 1
    assert "IQM, 95% percentile bootstrap (3 seeds)" in table(manifest, results)
