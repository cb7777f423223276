"""Progress where no bar can be drawn: a line a minute, in a log, a pipe or a scheduler's output."""

import voidrl
from voidrl.rollout.collector import RolloutStats
from voidrl.training.hooks import ProgressLines, UpdateReport, duration


def report(step, final=False, recent=0, mean=0.0):
    return UpdateReport(step=step, update=step // 100, metrics={"rollout/recent_return_mean": mean}, stats=RolloutStats(),
                        final=final, recent_episodes=recent)


def test_a_line_comes_once_a_minute_with_the_speed_since_the_last_and_the_time_left():
    now, lines = [0.0], []
    hook = ProgressLines(total=10_000, start_step=1_000, clock=lambda: now[0], write=lines.append)
    for step, seconds in ((1_200, 30.0), (1_400, 60.0), (1_600, 90.0), (3_400, 121.0)):
        now[0] = seconds
        hook.after_update(report(step, recent=3 if step > 1_500 else 0, mean=12.34))
    assert lines == [
        "voidrl: step 1,400/10,000 (14%), 7 steps/s, ETA 21 min 30 s",  # 400 steps in 60 s; 8,600 left
        "voidrl: step 3,400/10,000 (34%), 33 steps/s, return(last 3) 12.3, ETA 3 min 21 s",  # 2,000 in 61 s; 6,600 left: 201.3 s
    ]
    now[0] = 500.0
    hook.after_update(report(10_000, final=True))
    assert len(lines) == 2  # the run's own summary ends it


def test_durations_read_as_a_person_writes_them():
    assert [duration(s) for s in (42.4, 185, 3725)] == ["42 s", "3 min 05 s", "1 h 02 min"]


def test_a_run_whose_stderr_is_no_terminal_shows_lines_and_a_quiet_one_none(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(ProgressLines.__init__, "__defaults__", (0.0, *ProgressLines.__init__.__defaults__[1:]))  # every update
    for name, progress in (("shown", None), ("quiet", False)):
        voidrl.train("ppo", env="CartPole-v1", steps=1024, num_envs=2, num_steps=128, run_dir=str(tmp_path / name),
                     progress=progress, torch_threads=1)
        lines = [line.split(" (")[0] for line in capsys.readouterr().err.splitlines() if line.startswith("voidrl: step ")]
        assert lines == ([f"voidrl: step {step}/1,024" for step in ("256", "512", "768")] if progress is None else [])


def test_quiet_is_no_progress_on_the_command_line():
    from voidrl.cli import build_parser

    assert build_parser().parse_args(["train", "ppo", "--quiet"]).progress is False
