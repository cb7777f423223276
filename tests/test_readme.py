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
    assert (ROOT / "constraints" / "cpu.txt").read_text().split() == ["torch==2.13.0"]
