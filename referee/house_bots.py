"""The house bots shipped with the referee: their names, files and what they are (``koikoi-referee bots``).

A wheel carries them in ``referee/house_bots/`` (copied there from ``bots/`` at build time); a source checkout
(an editable install) uses the ``bots/`` folder beside the package.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import referee


@dataclass(frozen=True)
class HouseBot:
    """A shipped bot: its short name, its file (relative to the bots folder) and one line on what it is."""

    name: str
    file: str
    about: str


HOUSE_BOTS = (
    HouseBot("minimal", "minimal_bot.py", "the protocol's example: the first legal action"),
    HouseBot("random", "random_bot.py", "a uniformly random legal action (--seed N)"),
    HouseBot("random-js", "random_bot.js", "a uniformly random legal action, in JavaScript (needs node)"),
    HouseBot("random-c", "random_bot_c.sh", "a uniformly random legal action, in C (needs a C compiler)"),
    HouseBot("greedy", "greedy_bot.py", "a one-ply heuristic: the most valuable capture"),
    HouseBot("learned", "learned_bot.py", "a card play learned from the search bot's choices, no search"),
    HouseBot("pool", "pool_bot.py", "heuristic opponents of distinct styles (--style NAME), to measure bots against"),
    HouseBot("search", "search_bot.py", "determinized Monte Carlo search (--ms N per decision)"),
)
"""Every shipped bot, weakest first."""


def bots_folder() -> Path | None:
    """The folder of the shipped bots: inside the installed package, else ``bots/`` of a source checkout."""
    package = Path(referee.__file__).resolve().parent
    for folder in (package / "house_bots", package.parent / "bots"):
        if (folder / HOUSE_BOTS[0].file).is_file():
            return folder
    return None


def find(name: str) -> HouseBot | None:
    """The house bot called ``name`` (or by its file name), if any."""
    return next((b for b in HOUSE_BOTS if name in (b.name, b.file)), None)
