"""Network parts that a run can take from another run's checkpoint (pre-train -> fine-tune)."""

from __future__ import annotations

import torch

from voidrl.io.checkpoint import CheckpointError, load_checkpoint
from voidrl.nets.actor_critic import ActorCritic

PARTS: dict[str, tuple[str, ...]] = {
    "policy_body": ("actor_body.",),
    "policy_head": ("policy_head.", "log_std"),
    "aux_head": ("aux_value_head.",),
    "critic": ("critic_body.", "value_head."),
}
"""Loadable parts of an actor-critic, by state-dict key prefix."""


def validate_parts(parts: tuple[str, ...]) -> None:
    unknown = [part for part in parts if part not in PARTS]
    if unknown or not parts:
        raise ValueError(f"init_parts must name one or more of {', '.join(PARTS)}, got {', '.join(parts) or 'nothing'}")


def parts_of(policy: ActorCritic) -> tuple[str, ...]:
    """The parts ``policy`` has (every network has all but ``aux_head``, which only PPG's has)."""
    keys = policy.state_dict()
    return tuple(part for part, prefixes in PARTS.items() if any(key.startswith(prefixes) for key in keys))


def load_parts(policy: ActorCritic, path: str, parts: tuple[str, ...] | None = None) -> list[str]:
    """Copy the named parts (None: every part ``policy`` has) of the policy saved in checkpoint ``path``
    into ``policy``; returns the keys copied.

    Everything else keeps its fresh initialisation (e.g. leave out the heads to re-initialise them).
    """
    parts = parts_of(policy) if parts is None else parts
    validate_parts(parts)
    saved = load_checkpoint(path)["algorithm"]["policy"]
    own = policy.state_dict()
    prefixes = tuple(prefix for part in parts for prefix in PARTS[part])
    keys = [key for key in own if key.startswith(prefixes)]
    for part in parts:
        if not any(key.startswith(PARTS[part]) for key in keys):
            raise ValueError(f"init_parts: this network has no {part} (it has {', '.join(parts_of(policy))})")
    missing = [key for key in keys if key not in saved]
    mismatched = [key for key in keys if key in saved and saved[key].shape != own[key].shape]
    if missing or mismatched:
        raise CheckpointError(
            f"checkpoint {path!r} does not fit this network: missing {missing[:3]}, shape mismatch {mismatched[:3]}"
        )
    with torch.no_grad():
        for key in keys:
            own[key].copy_(saved[key])
    return keys
