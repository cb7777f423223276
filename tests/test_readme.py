"""The README's commands are the ones CI and users run."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def readme_commands():
    text = (ROOT / "README.md").read_text()
    section = text.split("## Two commands", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.+?)\n```", section)


def test_ci_runs_the_readme_test_command():
    main_job, tests = readme_commands()[:2]
    assert "pytest" in tests and "voidrl compare ppg" in main_job and "--pretrain-steps" in main_job
    assert tests in (ROOT / ".ci" / "run").read_text().splitlines()


def test_both_commands_pin_the_cpu_torch_build():
    for command in readme_commands()[:2]:
        assert "-c constraints/cpu.txt" in command
    assert "torch==2.13.0" in (ROOT / "constraints" / "cpu.txt").read_text().splitlines()


def test_each_command_installs_the_extras_it_needs():
    """The core has no suite and no plots: the main job (MinAtar, then compare's table and plot) names both extras."""
    main_job, tests = readme_commands()[:2]
    extras = re.search(r'-e "\.\[([\w,]+)\]"', main_job).group(1).split(",")
    assert "--env MinAtar/" in main_job and {"minatar", "analysis"} <= set(extras)
    assert '-e ".[test]"' in tests
