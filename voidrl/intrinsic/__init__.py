"""Intrinsic-reward plug-ins and their parts (augmentations, representation buffer)."""
