"""Actors on Ray feeding one learner (``--actors N``)."""
