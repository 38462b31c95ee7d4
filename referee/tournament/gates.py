"""The CI gates: what makes a finished (or merged) tournament exit 1.

``--fail-if-worse`` fails when the SPRT accepted H0; ``--fail-unless-better`` also when it reached no decision;
``--min-score X`` fails when the first (or gauntlet) bot's score rate is below X; with any of them,
``--max-forfeits`` fails when a bot forfeited more than that share of its games. Both the run
(:mod:`referee.tournament.session`) and the merge of shards (:mod:`referee.tournament.merge`) judge their standings
here.
"""

from __future__ import annotations

from referee.tournament.config import RunOptions, TournamentConfig
from referee.tournament.standings import Standings
from referee.tournament.stats import SprtState

EXIT_OK = 0
EXIT_GATE = 1
"""A CI gate failed (see :func:`judge`)."""
EXIT_ERROR = 2
"""Bad input or an output that cannot be written (a full disk): nothing was judged."""


def gated(options: RunOptions) -> bool:
    """Whether the run has a CI gate (its exit status judges the bots)."""
    return options.fail_if_worse or options.fail_unless_better or options.min_score is not None


def judge(config: TournamentConfig, options: RunOptions, st: Standings) -> list[str]:
    """The CI gates that failed, one line each: ``--fail-if-worse`` (SPRT accepted H0), ``--fail-unless-better``
    (it did not accept H1), ``--min-score``, and with any of them ``--max-forfeits`` (a bot forfeited more than
    that share of its games: its results say nothing of strength)."""
    failures = []
    s = st.sprt
    if (options.fail_if_worse or options.fail_unless_better) and s is not None and s.state is SprtState.H0:
        failures.append(f"SPRT accepted H0 (LLR {s.llr:.2f} <= {s.lower:.2f}): {config.hero} is not stronger")
    if options.fail_unless_better and s is not None and s.state is SprtState.CONTINUE:
        failures.append(
            f"SPRT reached no decision after {s.pairs} pairs (LLR {s.llr:.2f}, bounds {s.lower:.2f} and "
            f"{s.upper:.2f}): {config.hero} is not shown stronger; more --pairs may decide"
        )
    if gated(options):
        for b in st.bots:
            lost = sum(b.stats.forfeits.values())
            if b.games and lost / b.games > options.max_forfeits:
                reasons = ", ".join(f"{r} {n}" for r, n in sorted(b.stats.forfeits.items(), key=lambda x: -x[1]))
                failures.append(
                    f"{b.name} forfeited {lost} of its {b.games} games ({reasons}), more than --max-forfeits "
                    f"{options.max_forfeits:g} of them: the result says nothing of strength"
                )
    if options.min_score is not None:
        hero = next(b for b in st.bots if b.name == config.hero)
        est = hero.estimate
        if est is None or est.score < options.min_score:
            got = "no games" if est is None else f"{est.score:.3f}"
            failures.append(f"{hero.name} scored {got}, below --min-score {options.min_score:g}")
    return failures
