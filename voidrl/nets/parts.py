"""Network parts that a run can take from another run's checkpoint (pre-train -> fine-tune)."""

from __future__ import annotations

import warnings

import torch

from voidrl.io.checkpoint import CheckpointError, load_run_checkpoint
from voidrl.nets.actor_critic import ActorCritic
from voidrl.nets.encoders import APTEncoder, plain_encoder_state

PARTS: dict[str, tuple[str, ...]] = {
    "policy_body": ("actor_body.", "actor_lstm."),
    "policy_head": ("policy_head.", "log_std"),
    "aux_head": ("aux_value_head.",),
    "critic": ("critic_body.", "critic_lstm.", "value_head.", "intrinsic_value_head."),
}
"""Loadable parts of an actor-critic, by state-dict key prefix, taken from the saved policy. A recurrent
actor-critic's LSTMs go with their bodies: the actor's (the only one when shared) with policy_body, the
critic's with critic."""
APT_ENCODER = "apt_encoder"
APT_ENCODER_PREFIX = "actor_body.encoder."
"""``apt_encoder`` is taken from the saved run's APT plug-in, not its policy: the contrastive encoder
becomes the encoder of an ``apt`` policy body (the APT paper's actor acts on its features)."""
POLICY_CONVS = "policy_convs"
POLICY_CONVS_PREFIX = "actor_body.convs."
"""``policy_convs``: the convolutions of a pixel policy body alone (part of ``policy_body``; its fc layer starts fresh)."""
PART_PREFIXES: dict[str, tuple[str, ...]] = {**PARTS, APT_ENCODER: (APT_ENCODER_PREFIX,), POLICY_CONVS: (POLICY_CONVS_PREFIX,)}
"""Every part ``init_parts`` may name, by the keys of this run's policy it sets."""
ALL_PARTS = tuple(PART_PREFIXES)


def validate_parts(parts: tuple[str, ...]) -> None:
    unknown = [part for part in parts if part not in ALL_PARTS]
    if unknown or not parts:
        raise ValueError(f"init_parts must name one or more of {', '.join(ALL_PARTS)}, got {', '.join(parts) or 'nothing'}")
    bodies = [part for part in ("policy_body", APT_ENCODER, POLICY_CONVS) if part in parts]
    if len(bodies) > 1:
        raise ValueError(f"init_parts: {' and '.join(bodies)} each set the policy body's first layers; name one")


def parts_of(policy: ActorCritic) -> tuple[str, ...]:
    """The parts ``policy`` has (every network has all but ``aux_head``, which only PPG's has)."""
    keys = policy.state_dict()
    return tuple(part for part, prefixes in PARTS.items() if any(key.startswith(prefixes) for key in keys))


VALUE_PARTS = ("critic", "aux_head")


def default_parts(policy: ActorCritic, checkpoint: dict) -> tuple[str, ...]:
    """What ``--from`` loads without ``--init-parts``: every part ``policy`` has, except, from a reward-free
    run (an intrinsic reward with the task's weighted 0), the value parts: they learned intrinsic returns,
    and on MinAtar starting from them slowed fine-tuning (benchmarks/RESULTS.md)."""
    parts = parts_of(policy)
    config = checkpoint.get("config", {})
    reward_free = config.get("run", {}).get("intrinsic") is not None and config.get("intrinsic_config", {}).get("extrinsic_coef") == 0.0
    return tuple(part for part in parts if part not in VALUE_PARTS) if reward_free else parts


def load_parts(policy: torch.nn.Module, path: str, parts: tuple[str, ...] | None = None, checkpoint: dict | None = None) -> list[str]:
    """Copy the named parts (None: ``default_parts``) of the policy saved in checkpoint ``path``
    into ``policy``; returns the keys copied. ``checkpoint``: the payload of ``path`` if already loaded.

    Everything else keeps its fresh initialisation (e.g. leave out the heads to re-initialise them).
    """
    checkpoint = load_run_checkpoint(path) if checkpoint is None else checkpoint
    saved = dict(checkpoint["algorithm"]["policy"])
    own = policy.state_dict()
    if not isinstance(policy, ActorCritic):
        return load_whole(policy, own, saved, path, checkpoint, parts)
    if is_recurrent(saved):
        raise CheckpointError(f"checkpoint {path!r} holds a recurrent Q-network ({saved_algo(checkpoint)}); "
                              "an actor-critic cannot start from it")
    parts = default_parts(policy, checkpoint) if parts is None else parts
    validate_parts(parts)
    prefixes = tuple(prefix for part in parts for prefix in PART_PREFIXES[part])
    if APT_ENCODER in parts:
        saved.update(saved_apt_encoder(checkpoint, policy, path))
    keys = [key for key in own if key.startswith(prefixes)]
    for part in parts:
        if part in PARTS and not any(key.startswith(PARTS[part]) for key in keys):
            raise ValueError(f"init_parts: this network has no {part} (it has {', '.join(parts_of(policy))})")
    if POLICY_CONVS in parts and not any(key.startswith(POLICY_CONVS_PREFIX) for key in keys):
        raise ValueError("init_parts: this network's policy body has no convolutions (policy_convs); name policy_body")
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


def rescale_policy_logits(policy: torch.nn.Module, temperature: float, loaded_keys: list[str] | None = None) -> None:
    """Divide the action logits of ``policy``'s categorical head by ``temperature`` (its weight and bias: every logit
    ``z`` becomes ``z / temperature``, so the greedy action stays and sampling sharpens below 1). ``loaded_keys``: the
    keys ``load_parts`` copied, which must hold the head's (None: the whole policy was loaded)."""
    if temperature == 1.0:
        return
    if getattr(policy, "policy_kind", None) not in ("categorical", "multi_categorical"):
        kind = getattr(policy, "policy_kind", type(policy).__name__)
        raise ValueError(f"init_temperature rescales the logits of a discrete policy; this run's policy is {kind} (leave it at 1)")
    if loaded_keys is not None and "policy_head.weight" not in loaded_keys:
        raise ValueError("init_temperature rescales the loaded policy head, and init_parts leaves it out: "
                         "name policy_head, or leave init_temperature at 1")
    with torch.no_grad():
        policy.policy_head.weight.div_(temperature)
        policy.policy_head.bias.div_(temperature)


def warn_if_other_environment(option: str, path: str, checkpoint: dict, env_id: str) -> None:
    """Warn where the run saved in ``checkpoint`` (read from ``path`` for ``option``: init_from, guide) trained on another
    environment id than this run's ``env_id``. Networks whose shapes fit load anyway: the same game under another id,
    or a transfer between games made on purpose, are the user's to choose."""
    saved_env = checkpoint.get("config", {}).get("run", {}).get("env")
    if saved_env is not None and saved_env != env_id:
        warnings.warn(f"{option}: {path!r} was trained on {saved_env}, and this run's environment is {env_id}; its networks "
                      "are used where their shapes fit", stacklevel=2)


def fine_tuning_weights(checkpoint: dict) -> dict:
    """What ``--from`` reads of a run's ``checkpoint``, alone: its config, step and environment state (normaliser
    statistics), the policy's networks (every part: ``init_parts`` chooses among them) and, from an APT run, the
    contrastive encoder (``apt_encoder``). No optimiser, buffer or RNG state: a file to start runs from, not to
    resume one (``voidrl export --format weights``)."""
    weights = {name: checkpoint[name] for name in ("config", "step", "env") if name in checkpoint}
    weights["algorithm"] = {"policy": checkpoint["algorithm"]["policy"]}
    if "encoder" in checkpoint.get("intrinsic", {}):
        weights["intrinsic"] = {"encoder": checkpoint["intrinsic"]["encoder"]}
    return weights


def saved_algo(checkpoint: dict) -> str:
    return str(checkpoint.get("config", {}).get("algo", "an unknown algorithm"))


def is_recurrent(state: dict[str, torch.Tensor]) -> bool:
    return any(key.startswith("lstm.") for key in state)


Q_TORSO_PREFIX = "torso."
"""A Q-network's (R2D2's) loadable parts: ``policy_body``, its torso, or ``policy_convs``, the torso's convolutions, from a
Q-network's torso or an actor-critic's ``actor_body`` (a pre-trained policy's features under a fresh Q-head: the APT
paper fine-tunes off-policy)."""


def load_whole(policy: torch.nn.Module, own: dict, saved: dict, path: str, checkpoint: dict, parts: tuple[str, ...] | None) -> list[str]:
    """A network without named parts but its torso (R2D2's) starts whole from a saved network of the same kind,
    or its torso (``parts`` ``("policy_body",)``) or the torso's convolutions (``("policy_convs",)``) alone."""
    if parts is not None:
        return load_q_torso(own, saved, path, checkpoint, parts)
    if is_recurrent(saved) != is_recurrent(own) or set(saved) != set(own) or any(saved[k].shape != own[k].shape for k in own):
        raise CheckpointError(f"checkpoint {path!r} ({saved_algo(checkpoint)}) does not fit this {type(policy).__name__}")
    policy.load_state_dict(saved)
    return list(own)


def load_q_torso(own: dict, saved: dict, path: str, checkpoint: dict, parts: tuple[str, ...]) -> list[str]:
    """Copy the torso (or its convolutions) a saved Q-network or actor-critic's ``actor_body`` holds into ``own``'s
    ``torso.*``; the keys copied."""
    parts = tuple(parts)
    if parts not in (("policy_body",), (POLICY_CONVS,)):
        raise ValueError(f"init_parts: a Q-network loads policy_body (its torso), policy_convs (the torso's convolutions) "
                         f"or, without --init-parts, all of it; got {', '.join(parts) or 'nothing'}")
    within = "convs." if parts == (POLICY_CONVS,) else ""
    source = (Q_TORSO_PREFIX if any(key.startswith(Q_TORSO_PREFIX) for key in saved) else PARTS["policy_body"][0]) + within
    keys = [key for key in own if key.startswith(Q_TORSO_PREFIX + within)]
    if not keys:
        raise ValueError("init_parts: this Q-network's torso has no convolutions (policy_convs); name policy_body")
    taken = {key: source + key[len(Q_TORSO_PREFIX + within):] for key in keys}
    torso = {key for key in saved if key.startswith(source)}
    if set(taken.values()) != torso or any(saved[name].shape != own[key].shape for key, name in taken.items()):
        mismatched = sorted(set(taken.values()) ^ torso) or [name for key, name in taken.items() if saved[name].shape != own[key].shape]
        raise CheckpointError(f"checkpoint {path!r} ({saved_algo(checkpoint)}): its {source.rstrip('.')} does not fit this "
                              f"Q-network's torso (use the same --network): {mismatched[:3]}")
    with torch.no_grad():
        for key, name in taken.items():
            own[key].copy_(saved[name])
    return keys


def saved_apt_encoder(checkpoint: dict, policy: ActorCritic, path: str) -> dict[str, torch.Tensor]:
    """The checkpoint's APT encoder as ``actor_body.encoder.*`` keys of ``policy`` (spectral norm folded in)."""
    encoder = getattr(policy.actor_body, "encoder", None)
    if not isinstance(encoder, APTEncoder):
        raise ValueError("init_parts apt_encoder needs the apt policy body (--network apt)")
    if "intrinsic" not in checkpoint or "encoder" not in checkpoint["intrinsic"]:
        raise CheckpointError(f"checkpoint {path!r} holds no APT encoder (its run had no --intrinsic apt)")
    try:
        state = plain_encoder_state(checkpoint["intrinsic"]["encoder"], encoder.obs_shape)
    except RuntimeError as error:
        raise CheckpointError(f"the APT encoder in {path!r} does not fit these observations: {error}") from None
    return {APT_ENCODER_PREFIX + key: value for key, value in state.items()}
