"""``play``: one match (or several) between two bot programs, with a readable or JSON summary."""

from __future__ import annotations

import dataclasses
import json
import secrets
from pathlib import Path
from typing import Annotated

import typer

from referee.commands import fail
from referee.commands.bot_options import BOT_ENV_HELP, SANDBOX_HELP, sandbox_options
from referee.engine import Deal, EngineError, deals_from_lines, load_rules
from referee.match import MatchConfig, MatchInterrupted, MatchResult, TimeControl, run_matches
from referee.seats.process import DEFAULT_MEMORY_MB, BotCommandError, Limits, check_command
from referee.text import scores_text


def replay_paths(path: Path | None, games: int) -> list[Path | None]:
    """The replay file of each game: ``path`` itself for one game, ``NAME-001.jsonl``... for several."""
    if path is None:
        return [None] * games
    if games == 1:
        return [path]
    return [path.with_name(f"{path.stem}-{k:03d}{path.suffix or '.jsonl'}") for k in range(1, games + 1)]


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


def play_cmd(
    bot1: Annotated[
        str,
        typer.Argument(
            help="Seat 1: a bot command line (a .py or .js file runs with python/node), or human[:NAME] to "
            "play it yourself in the terminal (the time control applies to bots only)."
        ),
    ],
    bot2: Annotated[str, typer.Argument(help="Seat 2: a bot command line, or human[:NAME].")],
    rules: Annotated[str, typer.Option("--rules", "-r", help="A preset name or a rules file.")] = "guide",
    rounds: Annotated[
        int | None, typer.Option("--rounds", min=1, max=1000, help="Override the rules' rounds.")
    ] = None,
    seed: Annotated[
        int | None, typer.Option("--seed", help="Seed of the shuffle (default: a random one).")
    ] = None,
    deals: Annotated[
        Path | None,
        typer.Option("--deals", help="JSON lines of explicit deals, used in order before the shuffle."),
    ] = None,
    first_dealer: Annotated[
        int | None,
        typer.Option("--first-dealer", min=1, max=2, help="Seat that deals first (default: the rules)."),
    ] = None,
    replay: Annotated[
        Path | None, typer.Option("--replay", help="Write the replay here (numbered with --games).")
    ] = None,
    games: Annotated[
        int,
        typer.Option(
            "--games",
            min=1,
            max=100_000,
            help="Play N matches; game k uses seed+k-1 (against a human without --seed: a random seed each).",
        ),
    ] = 1,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON result per match instead.")] = False,
    bot_memory_mb: Annotated[
        int,
        typer.Option(
            "--bot-memory-mb", min=0, max=10**9,
            help="Memory limit of a bot (MiB; 0: none): address space per process, resident memory of all its "
            "processes together.",
        ),
    ] = DEFAULT_MEMORY_MB,
    bot_cpu_s: Annotated[
        int,
        typer.Option("--bot-cpu-s", min=0, max=10**9, help="CPU-time limit per bot process (seconds; 0: none)."),
    ] = 0,
    bot_cwd: Annotated[
        Path | None,
        typer.Option("--bot-cwd", help="Working directory of the bots (default: a fresh empty one per bot)."),
    ] = None,
    move_ms: Annotated[int, typer.Option("--move-ms", min=1, help="Time per decision (ms).")] = 1000,
    bank_ms: Annotated[int, typer.Option("--bank-ms", min=0, help="Time bank per match (ms).")] = 30000,
    startup_ms: Annotated[
        int, typer.Option("--startup-ms", min=1, help="Time for the handshake (ms).")
    ] = 10000,
    log_dir: Annotated[Path | None, typer.Option("--log-dir", help="Keep each bot's stderr here.")] = None,
    sandbox_mode: Annotated[str, typer.Option("--sandbox", help=SANDBOX_HELP)] = "auto",
    bot_env: Annotated[list[str] | None, typer.Option("--bot-env", help=BOT_ENV_HELP)] = None,
) -> None:
    """Play a match between two bot programs, or against one yourself (human); every move is checked.

    Exit 0 when it reached a result."""
    from referee.seats.human import is_human, run_human_matches

    humans = [is_human(b) for b in (bot1, bot2)]
    if all(humans):
        fail("only one seat can be human")
    try:
        r = load_rules(rules)
        if rounds is not None:
            r = dataclasses.replace(r, rounds=rounds)
        deal_list: tuple[Deal, ...] = ()
        if deals is not None:
            try:
                text = deals.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                fail(f"{deals}: cannot read: {exc}")
            deal_list = tuple(deals_from_lines(text.splitlines()))
    except EngineError as exc:
        fail(f"{deals}: {exc}" if deals is not None and "line" in str(exc)[:5] else str(exc))
    for command in (bot1, bot2):
        if is_human(command):
            continue
        try:
            check_command(command)
        except BotCommandError as exc:
            fail(str(exc))
    if log_dir is not None:
        try:
            log_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            fail(f"{log_dir}: cannot create: {exc.strerror}")
    paths = replay_paths(replay, games)
    for p in paths:
        if p is not None:
            try:
                p.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                fail(f"{p.parent}: cannot create the replay's folder: {exc.strerror}")
    seeds = game_seeds(seed, games, human=any(humans))
    if bot_cwd is not None and not bot_cwd.is_dir():
        fail(f"{bot_cwd}: no such folder for the bots")
    limits = Limits(bot_cpu_s or None, (bot_memory_mb << 20) or None, bot_cwd, **sandbox_options(sandbox_mode, bot_env))
    time = TimeControl(startup_ms=startup_ms, move_ms=move_ms, bank_ms=bank_ms)
    configs = [
        MatchConfig(
            rules=r,
            seed=seeds[k],
            match_id=f"m-{k + 1:04d}",
            deals=deal_list,
            first_dealer=None if first_dealer is None else first_dealer - 1,
            time=time,
            replay_path=paths[k],
        )
        for k in range(games)
    ]
    if not as_json:
        shown = "" if any(humans) else f"seed {seeds[0]}  "  # a person must not see the seed before playing
        typer.echo(f"{shown}rules {r.name}  {r.rounds} round(s)  {games} game(s)")
    tally = [0, 0, 0]

    def report(result: MatchResult) -> None:
        k = int(result.match_id[2:]) - 1
        tally[2 if result.winner is None else result.winner] += 1
        if as_json:
            typer.echo(
                json.dumps({**result.to_json(), "replay": None if paths[k] is None else str(paths[k])})
            )
        else:
            typer.echo("\n".join(summary_lines(result, paths[k])))

    try:
        run = run_human_matches if any(humans) else run_matches
        run((bot1, bot2), configs, log_dir=log_dir, limits=limits, on_result=report)
    except MatchInterrupted as exc:
        fail(str(exc), 143)
    except KeyboardInterrupt:
        fail("interrupted; every bot was stopped", 130)
    except OSError as exc:
        fail(f"cannot write: {exc}")
    if games > 1 and not as_json:
        typer.echo(f"games: seat 1 won {tally[0]}, seat 2 won {tally[1]}, draws {tally[2]}")


def register(app: typer.Typer) -> None:
    """Add ``play`` to the app."""
    app.command("play")(play_cmd)
