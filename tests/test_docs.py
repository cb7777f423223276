"""Every command the documentation site marks as runnable runs: the shell and Python blocks after a
``<!-- runnable -->`` line, at tiny budgets (a few thousand steps, two seeds, two episodes), each in a fresh
directory; and the site's pages are the ones its navigation lists."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
RUNNABLE = re.compile(r"<!-- runnable -->\n```(bash|python)\n(.+?)\n```", re.S)
TINY = [(r"--(pretrain-)?steps \d+", r"--\1steps 2048"), (r"--seeds \d+", "--seeds 2"), (r"--episodes \d+", "--episodes 2"),
        (r"\bsteps=[\d_]+", "steps=2048"), (r"\bepisodes=\d+", "episodes=2")]
"""Budgets shrunk so that every block runs in seconds; what a block does is otherwise what the page shows."""
TRAINING = re.compile(r"^(voidrl (?:train|pretrain|finetune|compare) .+?)(\s+#.*)?$", re.M)


def runnable_blocks() -> list[tuple[str, str, str]]:
    """(page and index, language, code at tiny budgets) of every runnable block of the site."""
    blocks = []
    for page in sorted(DOCS.rglob("*.md")):
        for index, (language, code) in enumerate(RUNNABLE.findall(page.read_text())):
            for pattern, replacement in TINY:
                code = re.sub(pattern, replacement, code)
            if language == "bash":
                code = TRAINING.sub(r"\1 --torch-threads 1 --no-progress", code)
            blocks.append((f"{page.relative_to(DOCS)}#{index}", language, code))
    return blocks


def test_the_site_has_runnable_blocks_of_both_languages():
    languages = {language for _, language, _ in runnable_blocks()}
    assert languages == {"bash", "python"} and len(runnable_blocks()) >= 10


@pytest.mark.parametrize("name,language,code", runnable_blocks(), ids=[name for name, _, _ in runnable_blocks()])
def test_a_runnable_block_runs(tmp_path, name, language, code):
    environment = os.environ | {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    command = ["bash", "-e", "-c", code] if language == "bash" else [sys.executable, "-c", code]
    result = subprocess.run(command, cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"{name}:\n{code}\n{result.stderr[-3000:]}"


def test_every_page_is_in_the_navigation():
    listed = set(re.findall(r":\s*([\w/-]+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(), re.M))
    pages = {page.relative_to(DOCS).as_posix() for page in DOCS.rglob("*.md")}
    assert pages == listed
