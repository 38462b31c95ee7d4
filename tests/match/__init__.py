"""The match (referee.match) with real bots: outcomes, hidden information, errors a bot author reads, the house bots,
golden playthroughs.
"""
