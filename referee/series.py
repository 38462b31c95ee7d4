"""A series of matches between two seats, as ``koikoi-referee play`` runs it: :func:`play`.

The command parses its options into a :class:`PlaySetup` and prints; everything else is here: loading the
rules and the deals, checking the bot commands and the folders, the seed of each game, the match configs, the
seats (a bot command, or a person at the terminal), and running the games. A problem is a :class:`PlayError`
(one line for the user and the exit status).

No bot process ever sees a deal twice: the explicit deals of a ``--deals`` file open every game, so with more
than one game each game starts fresh bot processes (without explicit deals a process is reused, since every
game's shuffle has its own seed), and a deals file that holds the same deal twice is refused.
"""

from __future__ import annotations

import dataclasses
import secrets
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.engine import Deal, EngineError, Rules, deals_from_lines, load_rules
from referee.errors import Interrupted, RefereeError
from referee.match import (
    MatchConfig,
    MatchResult,
    SeatFactory,
    bot_factory,
    log_name,
    run_matches,
)
from referee.replay.writer import is_compressed, plain_name
from referee.seats import BotSeat, Seat, package
from referee.seats.process import BotCommandError, Limits, check_command, readable
from referee.seats.sandbox import exposed_output
from referee.seats.settings import BotSettings
from referee.signing import SigningError, load_key
from referee.text import plural, scores_text, yaku_text

__all__ = [
    "Plan", "PlayError", "PlaySetup", "Played", "game_seeds", "plan", "play", "replay_paths", "result_line",
    "summary_lines",
]  # fmt: skip


class PlayError(RefereeError):
    """``play`` could not start or finish: ``str(error)`` is one line for the user, ``code`` the exit status
    (2: bad input or an unwritable file; a stop by Ctrl-C or SIGTERM is :class:`~referee.errors.Interrupted`)."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class PlaySetup:
    """What ``play`` was asked: the two seat specs (a bot command line, or ``human[:NAME]``) and the options.

    ``bots`` are the settings of both bots (time control, limits, environment, readable files, interpreter; each
    one unset takes its default; the match's time control is theirs), ``seat_bots`` each seat's own over them
    (see :meth:`settings_of`)."""

    seats: tuple[str, str]
    rules: str = "guide"  # a preset name or a rules file
    rounds: int | None = None  # overrides the rules' rounds
    seed: int | None = None  # None: a random one
    deals: Path | None = None  # JSON lines of explicit deals, used in order before the shuffle
    first_dealer: int | None = None  # wire seat 1 or 2; None: the rules decide
    replay: Path | None = None
    games: int = 1
    bots: BotSettings = BotSettings()  # noqa: RUF009 - frozen, so one shared default is safe
    seat_bots: tuple[BotSettings, BotSettings] = (BotSettings(), BotSettings())
    bot_cwd: Path | None = None  # None: a fresh empty folder per bot
    log_dir: Path | None = None  # keep each bot's stderr here (None: beside the replay, or a temporary folder)
    sandbox: str = "auto"  # auto, bwrap or none (see referee.seats.sandbox)
    ponder: bool = False  # bots may run while it is not their turn (else frozen)
    require_cgroups: bool = False  # no fall-back to rlimits where cgroups do not work
    key: Path | None = None  # the key that signs the replays (None: the user's key, made on first use)

    def settings_of(self, seat: int) -> BotSettings:
        """The settings of seat ``seat``'s bot (0 or 1): its own over both bots'."""
        return self.seat_bots[seat].over(self.bots)

    def limits_of(self, seat: int) -> Limits:
        """The process limits of seat ``seat``'s bot (0 or 1)."""
        return self.settings_of(seat).limits(
            sandbox=self.sandbox, cwd=self.bot_cwd, ponder=self.ponder, require_cgroups=self.require_cgroups
        )


@dataclass(frozen=True)
class Plan:
    """The games about to be played: the rules, one config per game, the replay file of each, whether a person
    plays (then no seed is shown before the games), and whether each game starts fresh bot processes."""

    rules: Rules
    configs: tuple[MatchConfig, ...]
    paths: tuple[Path | None, ...]
    human: bool
    fresh_processes: bool
    log_dir: Path | None = None  # where the bots' stderr logs go (None: no bot seat)

    @property
    def seeds(self) -> list[int]:
        """The seed of each game."""
        return [c.seed for c in self.configs]


def replay_paths(path: Path | None, games: int) -> list[Path | None]:
    """The replay file of each game: ``path`` itself for one game, ``NAME-001.jsonl``... for several."""
    if path is None:
        return [None] * games
    if games == 1:
        return [path]
    base, gz = plain_name(path), ".gz" if is_compressed(path) else ""
    return [base.with_name(f"{base.stem}-{k:03d}{base.suffix or '.jsonl'}{gz}") for k in range(1, games + 1)]


def game_seeds(seed: int | None, games: int, *, human: bool) -> list[int]:
    """The seed of each game: ``seed``, ``seed + 1``... (a random ``seed`` when None). A person sees each
    game's seed in its summary, so with a human seat and no ``seed`` every game draws its own: the seed of one
    game must not give away the deal of the next."""
    if seed is None and human:
        return [secrets.randbits(52) for _ in range(games)]
    base = secrets.randbits(52) if seed is None else seed  # not to be found from a hand; exact in JSON
    return [base + k for k in range(games)]


@dataclass(frozen=True)
class Played:
    """One finished game of a series: its result, its replay file and each seat's stderr log (None for a
    person)."""

    result: MatchResult
    replay: Path | None
    logs: tuple[Path | None, Path | None] = (None, None)

    def to_json(self) -> dict[str, Any]:
        """The result's JSON with the replay and log paths (``play --json``)."""
        return {**self.result.to_json(), "replay": None if self.replay is None else str(self.replay),
                "logs": [None if p is None else str(p) for p in self.logs]}  # fmt: skip


def result_line(result: MatchResult) -> str:
    """How a match ended in words: ``seat 2 (x) forfeits (timeout): seat 1 (y) wins in round 3``, ``seat 1 (y)
    wins 30-12 after 6 rounds (rounds)`` or ``draw 20-20 ...``."""
    names = result.names
    a, b = result.scores
    tail = f"after {plural(result.rounds, 'round')} ({result.reason})"
    f = result.forfeit
    if f is not None:
        lost = f"seat {f.seat + 1} ({names[f.seat]}) forfeits ({f.reason})"
        if result.winner is None:
            return f"{lost}; the other seat failed too: nobody wins"
        w = result.winner
        return f"{lost}: seat {w + 1} ({names[w]}) wins in round {result.rounds}"
    if result.winner is None:
        return f"draw {scores_text((a, b))} {tail}"
    w = result.winner
    tie = "; equal points: the first dealer wins (tie_break)" if a == b else ""
    return f"seat {w + 1} ({names[w]}) wins {scores_text((a, b))} {tail}{tie}"


def summary_lines(played: Played, person: int | None = None) -> list[str]:
    """A readable summary of one match: points round by round with yaku, the winner, any failure (with the
    failing bot's stderr log). ``person``: the seat (0 or 1) of a person who reads it, who is not shown the
    detail of the bot's failure (it may name the bot's cards)."""
    result, replay = played.result, played.replay
    names = result.names
    out = [f"{result.match_id}  seed {result.seed}  seat 1: {names[0]}  seat 2: {names[1]}"]
    for r in result.round_ends:
        if r["winner"] is None:
            text = f"nobody scores ({r['reason']})"
        else:
            yaku = yaku_text(r)
            text = f"seat {r['winner']} +{r['points']} ({r['reason']}{': ' + yaku if yaku else ''})"
        out.append(f"  round {r['round']}: {text}  scores {scores_text(r['scores'])}")
    if result.forfeit is not None:
        f = result.forfeit
        detail = "" if person is not None and f.seat != person else f": {f.detail}"
        out.append(f"  seat {f.seat + 1} ({names[f.seat]}) forfeits: {f.reason}{detail}")
        log = played.logs[f.seat]
        if log is not None:
            out.append(f"  its stderr: {log}")
    out.append(f"  result: {result_line(result)}")
    shown = [f"seat {i + 1} {log}" for i, log in enumerate(played.logs) if log is not None]
    if shown:
        out.append(f"  stderr: {'; '.join(shown)}")
    if replay is not None:
        out.append(f"  replay: {replay}")
    return out


def _load(setup: PlaySetup) -> tuple[Rules, tuple[Deal, ...]]:
    deals = setup.deals
    try:
        rules = load_rules(setup.rules)
        if setup.rounds is not None:
            rules = dataclasses.replace(rules, rounds=setup.rounds)
        deal_list: tuple[Deal, ...] = ()
        if deals is not None:
            try:
                text = deals.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise PlayError(f"{deals}: cannot read: {exc}") from None
            deal_list = tuple(deals_from_lines(text.splitlines()))
    except EngineError as exc:
        raise PlayError(f"{deals}: {exc}" if deals is not None and "line" in str(exc)[:5] else str(exc)) from None
    for k, deal in enumerate(deal_list):
        if deal in deal_list[:k]:
            raise PlayError(
                f"{deals}: deal {k + 1} repeats deal {deal_list.index(deal) + 1}: a bot would see it twice"
            )
    return rules, deal_list


def _make_folder(path: Path, what: str) -> None:
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise PlayError(f"{path}: cannot create{what}: {exc.strerror}") from None


def plan(setup: PlaySetup) -> Plan:
    """Check ``setup`` (rules, deals, bot commands, folders) and lay out its games. Raises :class:`PlayError`."""
    from referee.seats.human import is_human

    humans = [is_human(s) for s in setup.seats]
    if all(humans):
        raise PlayError("only one seat can be human")
    rules, deals = _load(setup)
    paths = replay_paths(setup.replay, setup.games)
    visible = [("files", Path(f)) for i in (0, 1) for f in setup.settings_of(i).files]
    if setup.bot_cwd is not None:
        visible.append(("bot_cwd", setup.bot_cwd))
    outputs = [("replay", p) for p in paths if p is not None]
    outputs += [("log_dir", setup.log_dir)] if setup.log_dir is not None else []
    if (exposed := exposed_output(outputs, visible)) is not None:
        name, what, why = exposed
        raise PlayError.about((name, what), "{} inside {}: " + why)
    _refuse_outputs(setup, paths)
    for p in paths:
        if p is not None and p.is_dir():  # before any folder is made for it
            raise PlayError.about("replay", f"{{}} {p}: a folder; the replay is a file (e.g. {p / 'match.jsonl'})")
    for p in paths:
        if p is not None:
            _make_folder(p.parent, " the replay's folder")
    log_dir = None if all(humans) else _log_dir(setup)
    for i, command in enumerate(setup.seats):
        if not is_human(command):
            try:
                found = package.find(command)
                if found is not None:
                    package.build(found, None if log_dir is None else log_dir / f"build-seat{i + 1}.log",
                                  setup.sandbox)
                check_command(command, python=python_of(setup, i))
            except (BotCommandError, package.PackageError) as exc:
                raise PlayError(str(exc)) from None
    seeds = game_seeds(setup.seed, setup.games, human=any(humans))
    if setup.bot_cwd is not None and not setup.bot_cwd.is_dir():
        what = "a file, not a folder" if setup.bot_cwd.exists() else "no such folder"
        raise PlayError(f"{setup.bot_cwd}: {what} for the bots")
    key = None
    if any(p is not None for p in paths):
        try:
            key = load_key(setup.key, create=setup.key is None)
        except SigningError as exc:
            raise PlayError(str(exc)) from None
        if key is None:
            raise PlayError.about("key", f"{{}} {setup.key}: no such key file")
    configs = tuple(
        MatchConfig(
            rules=rules,
            seed=seeds[k],
            match_id=f"m-{k + 1:04d}",
            deals=deals,
            first_dealer=None if setup.first_dealer is None else setup.first_dealer - 1,
            time=setup.bots.time,
            replay_path=paths[k],
            replay_key=key,
        )
        for k in range(setup.games)
    )
    return Plan(rules, configs, tuple(paths), any(humans), bool(deals) and setup.games > 1, log_dir)


def python_of(setup: PlaySetup, seat: int) -> str | None:
    """The interpreter of seat ``seat``'s ``.py`` bot (0 or 1): its own, else both bots', else (None) the
    referee's."""
    return setup.settings_of(seat).python


def _refuse_outputs(setup: PlaySetup, paths: Sequence[Path | None]) -> None:
    """:class:`PlayError` when a replay or the log folder would lie in a folder a bot may read."""
    from referee.seats.human import is_human

    named = [p for p in paths if p is not None]
    outputs = {("the replay" if len(named) == 1 else f"the replay of game {k}"): p for k, p in enumerate(named, 1)}
    if setup.log_dir is not None:
        outputs["the log folder"] = setup.log_dir
    elif setup.replay is not None:
        outputs["the log folder"] = setup.replay.with_name(f"{setup.replay.stem}-logs")
    try:
        folders = [
            f for i, c in enumerate(setup.seats) if not is_human(c)
            for f in readable(c, setup.settings_of(i).files, python_of(setup, i), planned=setup.sandbox != "none")
        ]  # fmt: skip
        package.refuse_outputs(outputs, folders)
    except (package.PackageError, BotCommandError) as exc:
        raise PlayError(str(exc)) from None


def _log_dir(setup: PlaySetup) -> Path:
    """Where the bots' stderr goes: ``--log-dir``, else ``REPLAY-logs/`` beside the (first) replay, else a new
    temporary folder."""
    if setup.log_dir is not None:
        folder = setup.log_dir
    elif setup.replay is not None:
        folder = setup.replay.with_name(f"{setup.replay.stem}-logs")
    else:
        try:
            return Path(tempfile.mkdtemp(prefix="koikoi-play-logs-"))
        except OSError as exc:
            raise PlayError(f"cannot create a folder for the bots' stderr: {exc.strerror}") from None
    _make_folder(folder, " the bots' log folder")
    return folder


def _seat(spec: str, log_dir: Path | None, limits: Limits, logs: list[Path | None]) -> SeatFactory:
    """The seat factory of ``spec`` (a person, or a bot whose current stderr log is kept in ``logs``)."""
    from referee.seats.human import HumanSeat, human_name, is_human

    if is_human(spec):
        return lambda config, i: HumanSeat(human_name(spec))
    make = bot_factory(spec, log_dir=log_dir, limits=limits)

    def bot(config: MatchConfig, i: int) -> Seat:
        seat = make(config, i)
        logs[i] = seat.process.stderr_path if isinstance(seat, BotSeat) else None
        return seat

    return bot


def play(
    setup: PlaySetup,
    *,
    on_start: Callable[[Plan], None] | None = None,
    on_result: Callable[[Played], None] | None = None,
) -> Sequence[MatchResult]:
    """Play the games of ``setup``: :func:`plan` them, call ``on_start`` with the plan, then ``on_result`` with
    each game (its result, replay file and the bots' stderr logs) as it comes. Bot processes are reused from
    game to game until one fails, except that with explicit deals each game starts fresh ones. Raises
    :class:`PlayError` (:class:`~referee.errors.Interrupted` when stopped); every bot is stopped whatever
    happens. Empty logs in a temporary log folder are removed at the end, except those of a bot that forfeited."""
    the_plan = plan(setup)
    if on_start is not None:
        on_start(the_plan)
    limits = [setup.limits_of(i) for i in (0, 1)]
    logs: list[Path | None] = [None, None]
    kept: set[Path | None] = set()

    def report(result: MatchResult) -> None:
        for i in (0, 1):  # a reused bot's stderr goes to the log of each match (see BotSeat.new_match)
            if logs[i] is not None and the_plan.log_dir is not None:
                logs[i] = the_plan.log_dir / log_name(result.match_id, i)
        if result.forfeit is not None:
            kept.add(logs[result.forfeit.seat])
        if on_result is not None:
            on_result(Played(result, the_plan.paths[int(result.match_id[2:]) - 1], (logs[0], logs[1])))

    seats = tuple(_seat(s, the_plan.log_dir, limits[i], logs) for i, s in enumerate(setup.seats))
    try:
        return run_matches(
            (seats[0], seats[1]), the_plan.configs, on_result=report,
            reuse=not the_plan.fresh_processes,
        )  # fmt: skip
    except KeyboardInterrupt:
        raise Interrupted("interrupted; every bot was stopped") from None
    except OSError as exc:
        raise PlayError(f"cannot write: {exc}") from None
    finally:
        if setup.log_dir is None and setup.replay is None and the_plan.log_dir is not None:
            _tidy(the_plan.log_dir, kept)


def _tidy(folder: Path, kept: set[Path | None]) -> None:
    """Remove the empty logs of ``folder`` (but those in ``kept``), and the folder if nothing is left."""
    try:
        for log in folder.glob("*.log"):
            if log not in kept and log.stat().st_size == 0:
                log.unlink()
        folder.rmdir()
    except OSError:
        pass  # not empty, or gone: nothing to tidy
