"""Learning environments on the referee's engine (``pip install 'koikoi-referee[rl]'``).

- :mod:`referee.rl.koikoi_v0`: the two-player PettingZoo AEC environment (``koikoi_v0.env()``).
- :mod:`referee.rl.single`: :class:`~referee.rl.single.KoikoiEnv`, a Gymnasium environment for one seat against
  an opponent (a built-in policy, a Python callable, or a bot command over ``koikoi/1``).
- :mod:`referee.rl.serve`: ``python -m referee.rl.serve module:policy``, a trained policy as a contest bot.
- :mod:`referee.rl.actions` and :mod:`referee.rl.observation`: the action space and the observation, field by
  field (docs/rl.md).

Every observation is built from ``referee.engine.observe(state, seat)``, the one builder of what a seat may know.
"""
