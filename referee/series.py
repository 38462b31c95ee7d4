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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from referee.engine import Deal, EngineError, Rules, deals_from_lines, load_rules
from referee.errors import RefereeError
from referee.match import MatchConfig, MatchInterrupted, MatchResult, SeatFactory, TimeControl, run_matches
from referee.replay.writer import is_compressed, plain_name
from referee.seats.process import DEFAULT_MEMORY_MB, BotCommandError, Limits, check_command
from referee.signing import SigningError, load_key
from referee.text import scores_text

__all__ = ["Plan", "PlayError", "PlaySetup", "game_seeds", "plan", "play", "replay_paths", "summary_lines"]


class PlayError(RefereeError):
    """``play`` could not start or finish: ``str(error)`` is one line for the user, ``code`` the exit status
    (2: bad input or an unwritable file, 130: Ctrl-C, 143: SIGTERM)."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class PlaySetup:
    """What ``play`` was asked: the two seat specs (a bot command line, or ``human[:NAME]``) and the options."""

    seats: tuple[str, str]
    rules: str = "guide"  # a preset name or a rules file
    rounds: int | None = None  # overrides the rules' rounds
    seed: int | None = None  # None: a random one
    deals: Path | None = None  # JSON lines of explicit deals, used in order before the shuffle
    first_dealer: int | None = None  # wire seat 1 or 2; None: the rules decide
    replay: Path | None = None
    games: int = 1
    time: TimeControl = TimeControl()  # noqa: RUF009 - frozen, so one shared default is safe
    bot_memory_mb: int = DEFAULT_MEMORY_MB  # 0: no limit
    bot_cpu_s: int = 0  # 0: no limit
    bot_cwd: Path | None = None  # None: a fresh empty folder per bot
    log_dir: Path | None = None  # keep each bot's stderr here
    sandbox: str = "auto"  # auto, bwrap or none (see referee.seats.sandbox)
    bot_env: tuple[tuple[str, str], ...] = ()  # --bot-env NAME=VALUE pairs
    key: Path | None = None  # the key that signs the replays (None: the user's key, made on first use)


@dataclass(frozen=True)
class Plan:
    """The games about to be played: the rules, one config per game, the replay file of each, whether a person
    plays (then no seed is shown before the games), and whether each game starts fresh bot processes."""

    rules: Rules
    configs: tuple[MatchConfig, ...]
    paths: tuple[Path | None, ...]
    human: bool
    fresh_processes: bool

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


def summary_lines(result: MatchResult, replay: Path | None) -> list[str]:
    """A readable summary of one match: points round by round with yaku, the winner, any failure."""
    names = result.names
    out = [f"{result.match_id}  seed {result.seed}  seat 1: {names[0]}  seat 2: {names[1]}"]
    for r in result.round_ends:
        if r["winner"] is None:
            text = f"nobody scores ({r['reason']})"
        else:
            yaku = ", ".join(f"{y['name']} {y['points']}" for y in r["yaku"])
            text = f"seat {r['winner']} +{r['points']} ({r['reason']}{': ' + yaku if yaku else ''})"
        out.append(f"  round {r['round']}: {text}  scores {scores_text(r['scores'])}")
    a, b = result.scores
    if result.forfeit is not None:
        f = result.forfeit
        out.append(f"  seat {f.seat + 1} ({names[f.seat]}) forfeits: {f.reason}: {f.detail}")
    if result.winner is None:
        out.append(f"  result: draw {scores_text((a, b))} after {result.rounds} round(s) ({result.reason})")
    else:
        w = result.winner
        tail = f"after {result.rounds} round(s) ({result.reason})"
        out.append(f"  result: seat {w + 1} ({names[w]}) wins {scores_text((a, b))} {tail}")
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
    for command in setup.seats:
        if not is_human(command):
            try:
                check_command(command)
            except BotCommandError as exc:
                raise PlayError(str(exc)) from None
    if setup.log_dir is not None:
        _make_folder(setup.log_dir, "")
    paths = replay_paths(setup.replay, setup.games)
    for p in paths:
        if p is not None:
            _make_folder(p.parent, " the replay's folder")
    seeds = game_seeds(setup.seed, setup.games, human=any(humans))
    if setup.bot_cwd is not None and not setup.bot_cwd.is_dir():
        raise PlayError(f"{setup.bot_cwd}: no such folder for the bots")
    key = None
    if any(p is not None for p in paths):
        try:
            key = load_key(setup.key, create=setup.key is None)
        except SigningError as exc:
            raise PlayError(str(exc)) from None
        if key is None:
            raise PlayError(f"--key {setup.key}: no such key file")
    configs = tuple(
        MatchConfig(
            rules=rules,
            seed=seeds[k],
            match_id=f"m-{k + 1:04d}",
            deals=deals,
            first_dealer=None if setup.first_dealer is None else setup.first_dealer - 1,
            time=setup.time,
            replay_path=paths[k],
            replay_key=key,
        )
        for k in range(setup.games)
    )
    return Plan(rules, configs, tuple(paths), any(humans), fresh_processes=bool(deals) and setup.games > 1)


def _seat(spec: str) -> str | SeatFactory:
    from referee.seats.human import HumanSeat, human_name, is_human

    return (lambda config, i: HumanSeat(human_name(spec))) if is_human(spec) else spec


def play(
    setup: PlaySetup,
    *,
    on_start: Callable[[Plan], None] | None = None,
    on_result: Callable[[MatchResult, Path | None], None] | None = None,
) -> Sequence[MatchResult]:
    """Play the games of ``setup``: :func:`plan` them, call ``on_start`` with the plan, then ``on_result`` with
    each result and its replay file as it comes. Bot processes are reused from game to game until one fails,
    except that with explicit deals each game starts fresh ones. Raises :class:`PlayError`; every bot is
    stopped whatever happens."""
    the_plan = plan(setup)
    if on_start is not None:
        on_start(the_plan)
    limits = Limits(
        setup.bot_cpu_s or None, (setup.bot_memory_mb << 20) or None, setup.bot_cwd, sandbox=setup.sandbox,
        env=setup.bot_env,
    )  # fmt: skip

    def report(result: MatchResult) -> None:
        if on_result is not None:
            on_result(result, the_plan.paths[int(result.match_id[2:]) - 1])

    try:
        return run_matches(
            (_seat(setup.seats[0]), _seat(setup.seats[1])), the_plan.configs, log_dir=setup.log_dir,
            limits=limits, on_result=report, reuse=not the_plan.fresh_processes,
        )  # fmt: skip
    except MatchInterrupted as exc:
        raise PlayError(str(exc), 143) from None
    except KeyboardInterrupt:
        raise PlayError("interrupted; every bot was stopped", 130) from None
    except OSError as exc:
        raise PlayError(f"cannot write: {exc}") from None
