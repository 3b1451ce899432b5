"""Keeping a store healthy: checks on open, ``doctor``, ``repair`` and ``rebuild_index``."""
