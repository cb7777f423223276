"""Atari game names from environment ids, without torch: ``voidrl envs`` and ``--help`` ask which suite an id is in."""

from __future__ import annotations

import re

from voidrl.extras import MissingExtra, require


def rom_name(env_id: str) -> str | None:
    """``"ALE/MsPacman-v5"``, ``"MsPacmanNoFrameskip-v4"`` or ``"ms_pacman"`` -> ``"ms_pacman"``; None if not Atari.
    Without ale-py (the ``atari`` extra) an id that only Atari games have (``ALE/...``, ``...NoFrameskip-v4``) is a
    ``MissingExtra`` naming the extra, and any other id is not Atari."""
    match = re.fullmatch(r"(?:ALE/)?([A-Za-z0-9_]+?)(?:NoFrameskip)?(?:-v\d+)?", env_id)
    if match is None:
        return None
    try:
        roms = require("ale_py.roms", "atari", env_id)
    except MissingExtra:
        if env_id.startswith("ALE/") or "NoFrameskip" in env_id:
            raise
        return None
    name = match.group(1)
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()
    available = set(roms.get_all_rom_ids())
    for candidate in (name, snake):
        if candidate in available:
            return candidate
    return None


def all_rom_names() -> list[str]:
    """Every game ALE ships, by ROM name; ``MissingExtra`` without ale-py (the ``atari`` extra)."""
    return sorted(require("ale_py.roms", "atari", "the Atari games").get_all_rom_ids())
