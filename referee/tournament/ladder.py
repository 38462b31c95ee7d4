"""``tournament add``: a ladder step on an existing tournament folder.

New entrants (or a new version of one, the old version kept or retired) join a tournament that has been played:
the folder's description is rewritten, signed under the same key, with a ladder step
(:class:`~referee.tournament.config.Stage`) that appends the new pairings to the schedule; only those are
played, on the same tournament seed and deal suite as every other pairing, and their results are appended to the
same signed ``results.jsonl``. The recorded lines are not touched; the report (joint ratings over every game)
is rewritten at the end. An interrupted step continues with ``tournament --resume DIR``, like any run: the
step is in the description.
"""

from __future__ import annotations

import dataclasses
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from referee.errors import Interrupted
from referee.seats.process import ProcessError, absolute_command
from referee.tournament.config import BotSpec, RunOptions, Stage, TournamentConfig, TournamentError, parse_bot
from referee.tournament.folder import NO_KEY, RESULTS, signing_key
from referee.tournament.launch import Report, play_folder, preflight
from referee.tournament.schedule import check_size
from referee.tournament.separation import DEFAULT_MAX_PAIRS
from referee.tournament.session import Interim, check_new, default_jobs, resume
from referee.tournament.store import Store


@dataclass(frozen=True)
class AddRequest:
    """The ``tournament add`` command's options."""

    folder: Path
    bots: tuple[str, ...] = ()  # NAME=COMMAND or a bot folder, as for a tournament's --bot
    retire: tuple[str, ...] = ()  # bots that play no new pairing
    jobs: int | None = None
    key: Path | None = None
    until_separated: bool = False
    max_pairs: int | None = None  # the budget of this step's --until-separated pairs
    html: bool = True
    forfeit_broken: bool = False
    live_every: int = 0
    rating_interval: int = 0


def extended(config: TournamentConfig, bots: list[BotSpec], retire: tuple[str, ...], start: int) -> TournamentConfig:
    """``config`` with a ladder step: ``bots`` added, ``retire`` retired, the step's matches from schedule
    position ``start``; :class:`TournamentError` (one line) for a name that is taken or unknown."""
    names = [b.name for b in config.bots]
    for b in bots:
        if b.name in names:
            raise TournamentError.about(
                ("bots", "retire"), f"{{}} {b.name}: the tournament has a bot of that name; add a new version under a "
                f"new name (e.g. {b.name}-2, with {{}} {b.name} to stop the old one)",
            )
    for name in retire:
        if name not in names:
            raise TournamentError.about("retire", f"{{}} {name}: not a bot of this tournament ({', '.join(names)})")
        if name in config.retired:
            raise TournamentError.about("retire", f"{{}} {name}: already retired")
    workdir = Path.cwd().absolute()
    try:
        added = [dataclasses.replace(b, command=absolute_command(b.command, workdir)) for b in bots]
    except ProcessError as exc:
        raise TournamentError(str(exc)) from None
    stage = Stage(tuple(b.name for b in added), tuple(retire), start, secrets.randbits(52))
    return dataclasses.replace(config, bots=(*config.bots, *added), ladder=(*config.ladder, stage))


def _options(store: Store, req: AddRequest) -> RunOptions:
    """The folder's run options for this step: ``--until-separated`` with a budget counted from the pairs already
    added (so a resume spends only what is left)."""
    if not req.until_separated:
        if req.max_pairs is not None:
            raise TournamentError.about(("max_pairs", "until_separated"), "{} is the budget of {}")
        return dataclasses.replace(store.options, until_separated=False, max_pairs=None)
    more = DEFAULT_MAX_PAIRS if req.max_pairs is None else req.max_pairs
    return dataclasses.replace(store.options, until_separated=True, max_pairs=store.extended + more)


def add(req: AddRequest, *, stream: TextIO, warn: Callable[[str], None]) -> Report:
    """Add the entrants of ``req`` to the tournament in ``req.folder``, play their pairings (and with
    ``until_separated`` the pairs that separate the ranks), and report over every game.

    Raises :class:`~referee.errors.RefereeError` for bad input (exit 2) and
    :class:`~referee.errors.Interrupted` for Ctrl-C and SIGTERM (exit 130, continue with ``--resume``).
    """
    if not req.bots and not req.retire and not req.until_separated:
        raise TournamentError.about(
            ("bots", "retire"), "name the entrants with {} NAME=COMMAND (and/or bots to retire with {})"
        )
    specs = [parse_bot(b) for b in req.bots]
    if len({b.name for b in specs}) != len(specs):
        raise TournamentError.about("bots", f"{{}}: names must be unique; got {', '.join(b.name for b in specs)}")
    key = signing_key(req.key, create=False)
    if key is None:
        warn(f"{req.folder / RESULTS}: {NO_KEY}")
    jobs = req.jobs or default_jobs()
    try:
        store = resume(req.folder, jobs, key)
    except KeyboardInterrupt:
        raise Interrupted.resumable(req.folder) from None
    try:
        if store.options.sprt is not None:
            raise TournamentError(f"{req.folder}: an SPRT run compares two bots; it takes no entrants")
        if tuple(store.options.shard) != (1, 1):
            raise TournamentError(f"{req.folder}: a shard takes no entrants; add them to the merged folder")
        config = extended(store.config, specs, req.retire, store.schedule.next_index())
        options = _options(store, req)
        check_size(config)
        check_new(config, options, req.folder)
        preflight(config, req.forfeit_broken, warn, "fix it, or", [b.name for b in specs])
        store.restage(config, options)
        for w in store.warnings:
            if NO_KEY not in w:
                warn(w)
    except BaseException:
        store.close()
        raise
    interim = Interim(results=req.live_every, pairs=req.rating_interval, html=req.html)
    try:
        return play_folder(store, stream, warn, interim)
    except KeyboardInterrupt:
        raise Interrupted.resumable(req.folder) from None
