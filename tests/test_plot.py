"""voidrl plot: curve alignment and intervals on hand-computed numbers; PNGs from hand-written run dirs."""

import json
import math

import numpy as np
import pytest

from tests.cli_helpers import voidrl
from voidrl.cli import main
from voidrl.io.report import best_window_mean, group_runs, mean_curve, trailing_means


def write_run(path, algo="ppo", env="CartPole-v1", episodes=(), evaluations=None):
    """A run directory with config.json, episodes.csv ``(step, return)`` and optionally evaluations.csv ``(step, mean)``."""
    path.mkdir(parents=True)
    (path / "config.json").write_text(json.dumps({"algo": algo, "run": {"env": env}}))
    (path / "episodes.csv").write_text("step,return,length\n" + "".join(f"{s},{r},10\n" for s, r in episodes))
    if evaluations is not None:
        (path / "evaluations.csv").write_text(
            "step,return_mean,return_std,episodes\n" + "".join(f"{s},{m},1.0,10\n" for s, m in evaluations))
    return path


def test_mean_curve_aligns_runs_and_gives_the_t_interval():
    first = (np.array([10, 20]), np.array([1.0, 3.0]))
    second = (np.array([10, 20]), np.array([3.0, 7.0]))
    mean, half = mean_curve([first, second], np.array([5, 10, 15, 20, 30]))
    # Each run is read as its latest value by then: [nan, 1, 1, 3, 3] and [nan, 3, 3, 7, 7].
    assert np.isnan(mean[0]) and np.isnan(half[0])
    assert mean[1:] == pytest.approx([2.0, 2.0, 5.0, 5.0])
    t = 12.706  # t_{0.975} with 1 degree of freedom
    std = np.array([math.sqrt(2), math.sqrt(2), math.sqrt(8), math.sqrt(8)])  # sample std of two values
    assert half[1:] == pytest.approx(t * std / math.sqrt(2), rel=1e-4)  # scipy: 12.7062

    late = (np.array([15, 20]), np.array([3.0, 7.0]))  # no value at step 10 yet
    mean, _ = mean_curve([first, late], np.array([10, 15]))
    assert np.isnan(mean[0]) and mean[1] == 2.0


def test_trailing_and_best_window_means():
    returns = np.array([1.0, 2.0, 3.0, 10.0, 0.0])
    assert trailing_means(returns, 2) == pytest.approx([1.0, 1.5, 2.5, 6.5, 5.0])
    assert best_window_mean(returns, 2) == 6.5
    assert best_window_mean(returns, 100) == pytest.approx(3.2)  # fewer episodes than the window: all of them
    assert math.isnan(best_window_mean(np.array([]), 100))


def test_runs_are_grouped_by_config_unless_labelled(tmp_path):
    a = write_run(tmp_path / "a", episodes=[(1, 1.0)])
    b = write_run(tmp_path / "b", episodes=[(1, 1.0)])
    c = write_run(tmp_path / "c", algo="ppg", env="MinAtar/Breakout-v1", episodes=[(1, 1.0)])
    assert group_runs([a, b, c], []) == {"ppo CartPole-v1": [a, b], "ppg MinAtar/Breakout-v1": [c]}
    assert group_runs([a, b, c], [("first", "*/a"), ("all", "*")]) == {"first": [a], "all": [b, c]}
    with pytest.raises(ValueError, match="--label x=nope matches none"):
        group_runs([a], [("x", "nope")])


@pytest.mark.slow
def test_plot_writes_curves_and_best_score_pngs(tmp_path):
    episodes = [(100 * k, float(k)) for k in range(1, 31)]
    write_run(tmp_path / "runs" / "s0", episodes=episodes, evaluations=[(1000, 5.0), (2000, 9.0), (3000, 8.0)])
    write_run(tmp_path / "runs" / "s1", episodes=[(s, r + 2) for s, r in episodes], evaluations=[(1000, 6.0), (2000, 12.0)])
    write_run(tmp_path / "runs" / "other", algo="ppg", episodes=episodes)  # no evaluations: training fallback
    result = voidrl("plot", "runs/s0", "runs/s1", "runs/other", "--out", "figs/cartpole", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["figs/cartpole-curves.png", "figs/cartpole-best.png"]
    for name in result.stdout.split():
        assert (tmp_path / name).stat().st_size > 5000


def test_plot_table_compares_two_labelled_groups(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for seed, level in enumerate([3.0, 5.0]):  # constant returns: every measure is the level
        write_run(tmp_path / "runs" / f"explore{seed}", episodes=[(100 * k, level) for k in range(1, 31)])
    for seed, level in enumerate([1.0, 2.0]):
        write_run(tmp_path / "runs" / f"plain{seed}", episodes=[(100 * k, level) for k in range(1, 31)])
    assert main(["plot", "runs/explore0", "runs/explore1", "runs/plain0", "runs/plain1", "--out", "figs/x",
                 "--label", "explore=*explore*", "--label", "plain=*plain*", "--table", "3000"]) == 0
    assert capsys.readouterr().out.split()[2:4] == ["figs/x-table.md", "figs/x-table.png"]
    table = (tmp_path / "figs" / "x-table.md").read_text()
    assert table.splitlines()[0] == "| measure | explore (n=2) | plain (n=2) | explore - plain | verdict |"
    final = next(line for line in table.splitlines() if line.startswith("| final return"))
    estimates = [float(cell.split()[0]) for cell in final.strip("|").split("|")[1:4]]
    assert estimates == [4.0, 1.5, 2.5]  # the means 4 and 1.5, their difference
    assert (tmp_path / "figs" / "x-table.png").stat().st_size > 5000
    assert main(["plot", "runs/plain0", "--table", "0"]) == 2
    assert "--table must be a positive number of steps, got 0" in capsys.readouterr().err


def test_committed_gzipped_episodes_give_the_same_table(tmp_path, monkeypatch, capsys):
    import gzip

    monkeypatch.chdir(tmp_path)
    for seed, level in enumerate([3.0, 5.0, 1.0, 2.0]):
        write_run(tmp_path / "runs" / f"r{seed}", episodes=[(100 * k, level + k / 30) for k in range(1, 31)])
    arguments = ["runs/r0", "runs/r1", "runs/r2", "runs/r3", "--label", "a=*r[01]", "--label", "b=*r[23]", "--table", "3000"]
    assert main(["plot", *arguments, "--out", "figs/plain"]) == 0
    for seed in range(4):
        path = tmp_path / "runs" / f"r{seed}" / "episodes.csv"
        path.with_suffix(".csv.gz").write_bytes(gzip.compress(path.read_bytes()))
        path.unlink()
    assert main(["plot", *arguments, "--out", "figs/gzipped"]) == 0
    assert (tmp_path / "figs" / "gzipped-table.md").read_text() == (tmp_path / "figs" / "plain-table.md").read_text()
    (tmp_path / "runs" / "r0" / "episodes.csv.gz").unlink()
    capsys.readouterr()
    assert main(["plot", *arguments, "--out", "figs/missing"]) == 2
    assert "nor a gzipped copy" in capsys.readouterr().err


def test_plot_table_with_unequal_seed_counts_uses_one_statistic_throughout(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for seed, level in enumerate([0.0, 0.0, 1.0, 1.0, 10.0]):  # mean 2.4, interquartile mean 0.67
        write_run(tmp_path / "runs" / f"explore{seed}", episodes=[(100 * k, level) for k in range(1, 31)])
    for seed, level in enumerate([1.0, 2.0]):
        write_run(tmp_path / "runs" / f"plain{seed}", episodes=[(100 * k, level) for k in range(1, 31)])
    assert main(["plot", *(f"runs/explore{s}" for s in range(5)), "runs/plain0", "runs/plain1", "--out", "figs/x",
                 "--label", "explore=*explore*", "--label", "plain=*plain*", "--table", "3000"]) == 0
    capsys.readouterr()
    final = next(line for line in (tmp_path / "figs" / "x-table.md").read_text().splitlines()
                 if line.startswith("| final return"))
    estimates = [float(cell.split()[0]) for cell in final.strip("|").split("|")[1:4]]
    assert estimates == [2.4, 1.5, 0.9]  # with 2 plain seeds: means and Welch's difference of means, not an IQM


@pytest.mark.slow
def test_plot_bad_input_is_one_line_naming_the_path(tmp_path):
    for args, fragment in [(["/nonexistent"], "'/nonexistent' does not exist"),
                           (["empty"], "'empty/episodes.csv' does not exist")]:
        (tmp_path / "empty").mkdir(exist_ok=True)
        result = voidrl("plot", *args, cwd=tmp_path)
        assert result.returncode == 2, result.stderr
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and fragment in lines[0], result.stderr


@pytest.mark.parametrize("rows,fragment", [
    ("100,nan,10\n", "row 1 holds a return that is not finite"),
    ("100,1.0,10\n200,inf,10\n", "row 2 holds a return that is not finite"),
    ("100,1.0,-3\n", "row 1 holds a length that is not positive"),
    ("200,1.0,10\n100,1.0,10\n", "row 2 holds a step before the previous row's"),
])
def test_plot_refuses_episodes_no_run_writes_naming_the_file_and_row(tmp_path, monkeypatch, capsys, rows, fragment):
    monkeypatch.chdir(tmp_path)
    run = write_run(tmp_path / "run")
    (run / "episodes.csv").write_text("step,return,length\n" + rows)
    assert main(["plot", "run", "--out", "figs/x"]) == 2
    error = capsys.readouterr().err.strip()
    assert fragment in error and "episodes.csv" in error and len(error.splitlines()) == 1


def test_plot_refuses_a_damaged_or_foreign_file_in_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    run = write_run(tmp_path / "run", episodes=[(100, 1.0)])
    (run / "episodes.csv").unlink()
    (run / "episodes.csv.gz").write_bytes(b"\x1f\x8b\x08\x00 this is no gzip stream")
    assert main(["plot", "run", "--out", "figs/x"]) == 2
    assert "episodes.csv.gz' cannot be read as CSV text" in capsys.readouterr().err
    (run / "episodes.csv.gz").unlink()
    (run / "episodes.csv").write_bytes("step,return,length\n100,1.0,10\n".encode("utf-16"))
    assert main(["plot", "run", "--out", "figs/x"]) == 2
    assert "episodes.csv' cannot be read as CSV text (UnicodeDecodeError" in capsys.readouterr().err


def test_plot_counts_each_run_once_and_warns_of_a_budget_past_the_runs_end(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for name in ("a0", "a1", "b0", "b1"):
        write_run(tmp_path / "runs" / name, episodes=[(100 * k, 1.0) for k in range(1, 31)])
    assert main(["plot", "runs/a0", "runs/a0/", "--out", "figs/x"]) == 2
    assert "'runs/a0/' is given twice (also as 'runs/a0')" in capsys.readouterr().err
    groups = ["--label", "a=*a?", "--label", "b=*b?"]
    assert main(["plot", "runs/a0", "runs/a1", "runs/b0", "runs/b1", *groups, "--table", "3000", "--out", "figs/x"]) == 0
    assert "warning" not in capsys.readouterr().err
    assert main(["plot", "runs/a0", "runs/a1", "runs/b0", "runs/b1", *groups, "--table", "10000", "--out", "figs/x"]) == 0
    assert "warning: 4 of 4 runs end before --table's budget of 10,000 steps (the first: 'runs/a0', its last episode at step 3,000)" \
        in capsys.readouterr().err
