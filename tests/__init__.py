"""The test suite of koikoi-referee, one folder per concept (engine, protocol, seats, match, replay, tournament,
rl, cli); what the modules share is in :mod:`tests.helpers`."""
