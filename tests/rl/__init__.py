"""The learning environments (referee.rl) and a trained policy as a bot."""
