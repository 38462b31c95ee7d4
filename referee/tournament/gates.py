"""The CI gates: what makes a finished (or merged) tournament exit 1.

``--fail-if-worse`` fails when the SPRT accepted H0; ``--min-score X`` fails when the first (or gauntlet) bot's
score rate is below X. Both the run (:mod:`referee.tournament.session`) and the merge of shards
(:mod:`referee.tournament.merge`) judge their standings here.
"""

from __future__ import annotations

from referee.tournament.config import RunOptions, TournamentConfig
from referee.tournament.standings import Standings
from referee.tournament.stats import SprtState

EXIT_OK = 0
EXIT_GATE = 1
"""A CI gate failed: ``--fail-if-worse`` and the SPRT accepted H0, or ``--min-score`` was not reached."""
EXIT_ERROR = 2
"""Bad input or an output that cannot be written (a full disk): nothing was judged."""


def judge(config: TournamentConfig, options: RunOptions, st: Standings) -> list[str]:
    """The CI gates that failed, one line each: ``--fail-if-worse`` (SPRT accepted H0), ``--min-score``."""
    failures = []
    if options.fail_if_worse and st.sprt is not None and st.sprt.state is SprtState.H0:
        failures.append(
            f"SPRT accepted H0 (LLR {st.sprt.llr:.2f} <= {st.sprt.lower:.2f}): {config.hero} is not stronger"
        )
    if options.min_score is not None:
        hero = next(b for b in st.bots if b.name == config.hero)
        est = hero.estimate
        if est is None or est.score < options.min_score:
            got = "no games" if est is None else f"{est.score:.3f}"
            failures.append(f"{hero.name} scored {got}, below --min-score {options.min_score:g}")
    return failures
