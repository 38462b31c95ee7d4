"""Replays (referee.replay): verify, show, compressed files, the HTML viewer."""
