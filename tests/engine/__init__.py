"""The rules engine (referee.engine): rounds from explicit deals, yaku per preset, rules files, invariants, its two
builds and its imports.
"""
