"""Checkpoints and run logs."""

from voidrl.io.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from voidrl.io.logger import RunLogger

__all__ = ["CheckpointError", "RunLogger", "load_checkpoint", "save_checkpoint"]
