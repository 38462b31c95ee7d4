"""Tournaments (referee.tournament): units, real runs, faults, contests, deals, ratings, pages, Ray."""
