"""Scheduling by uncertainty (``--until-separated``): more pairs where neighbouring ranks overlap most.

After the schedule is played, each round looks at the standings' joint ratings: two bots of adjacent ranks
(retired bots left out) are *separated* when the likelihood that the upper one is stronger is at least
:data:`SEPARATED` and both have a rating (enough games). Every adjacent couple not yet separated gets one more
deal pair of their pairing, the most overlapping first, as far as the budget allows; the round's pairs are
played, and the next round looks again. It stops when every adjacent couple is separated, when the budget of
added pairs is spent, or when no couple left has a pairing to play (a gauntlet's other bots never meet).

The choice depends on the recorded results only (in schedule order), so a fixed seed and deterministic bots make
the same pairs, however many jobs play them and however often the run is resumed.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from referee.tournament.config import TournamentConfig
from referee.tournament.schedule import pairings
from referee.tournament.standings import Standings

SEPARATED = 0.95
"""The likelihood of superiority at which two adjacent ranks count as separated."""

DEFAULT_MAX_PAIRS = 200
"""The budget of added pairs when ``--max-pairs`` is not given."""


@dataclass(frozen=True)
class Couple:
    """Two bots of adjacent ranks (``upper`` above) and how sure the ratings are of their order."""

    upper: str
    lower: str
    los: float | None  # the likelihood that upper is stronger; None: a rating is missing (too few games)

    @property
    def separated(self) -> bool:
        """True when the upper bot is stronger with at least :data:`SEPARATED` likelihood."""
        return self.los is not None and self.los >= SEPARATED


def couples(st: Standings, config: TournamentConfig) -> list[Couple]:
    """The adjacent ranks of the active (not retired) bots, best first."""
    retired = set(config.retired)
    ranked = [b for b in st.bots if b.name not in retired]
    out: list[Couple] = []
    for above, below in itertools.pairwise(ranked):
        ra, rb = above.rating, below.rating
        los = None
        if st.ratings is not None and ra is not None and rb is not None and ra.enough and rb.enough:
            los = st.ratings.los(above.name, below.name)
        out.append(Couple(above.name, below.name, los))
    return out


def next_pairings(st: Standings, config: TournamentConfig, budget: int) -> list[int]:
    """The pairings that get one more pair this round: one for each adjacent couple not separated (and having a
    pairing), the least separated first, at most ``budget``; empty when the round has nothing to do."""
    index = {frozenset((p.first, p.second)): p.index for p in pairings(config)}
    open_couples = [(k, c) for k, c in enumerate(couples(st, config)) if not c.separated]
    open_couples.sort(key=lambda kc: (-1.0 if kc[1].los is None else kc[1].los, kc[0]))
    chosen: list[int] = []
    for _, c in open_couples:
        pairing = index.get(frozenset((c.upper, c.lower)))
        if pairing is not None and pairing not in chosen:
            chosen.append(pairing)
    return chosen[: max(0, budget)]


def summary(st: Standings, config: TournamentConfig, added: int, budget: int) -> dict[str, Any]:
    """What ``standings.json`` says of an ``--until-separated`` run: whether every adjacent couple is separated,
    the pairs added and their budget, the whole pairs and games counted, and each couple's likelihood."""
    cs = couples(st, config)
    return {
        "separated": all(c.separated for c in cs),
        "level": SEPARATED,
        "added_pairs": added,
        "max_pairs": budget,
        "pairs": sum(p.pairs for p in st.pairings),
        "games": st.counted,
        "couples": [
            {"upper": c.upper, "lower": c.lower, "los": None if c.los is None else round(c.los, 4)} for c in cs
        ],
    }


def summary_line(doc: dict[str, Any]) -> str:
    """The terminal's line for :func:`summary`."""
    state = "every adjacent pair of ranks separated at 95%" if doc["separated"] else "not all ranks separated"
    return (
        f"until separated: {state} after {doc['pairs']} pairs ({doc['games']} games; {doc['added_pairs']} pairs "
        f"added of a budget of {doc['max_pairs']})"
    )
