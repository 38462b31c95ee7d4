"""Seats (referee.seats): the bot process, its limits and sandbox, the hostile and fairness batteries, the human seat,
the bot helper.
"""
