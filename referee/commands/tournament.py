"""``tournament``: run, resume or merge a tournament between bot programs.

``koikoi-referee tournament [OPTIONS]`` runs one (the group's own callback), ``--resume DIR`` continues an
interrupted one, and ``koikoi-referee tournament merge DIR...`` combines shards.
"""

from __future__ import annotations

import json
import secrets
import signal
import sys
import time
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Annotated

import typer

from referee.commands import fail
from referee.commands.bot_options import BOT_ENV_HELP, SANDBOX_HELP, sandbox_options, with_sandbox
from referee.errors import RefereeError

if TYPE_CHECKING:
    from referee.tournament import TournamentConfig

EXIT_CODES = (
    "Exit codes: 0 the tournament finished and every CI gate passed; 1 a CI gate failed (--fail-if-worse "
    "and the SPRT accepted H0, or the first/gauntlet bot's score rate is below --min-score); 2 bad input "
    "(options, tournament file, bot command, output folder); 130 interrupted (continue with --resume "
    "DIR)."
)

HELP = "\n\n".join(
    [
        "Play a tournament between bot programs: round-robin or gauntlet, duplicate deal pairs (every deal "
        "played twice with the seats swapped), parallel matches on reused bot processes, standings with score"
        " rates, Elo and error bars, an SPRT for CI, resumable output and shards.",
        "Bots come from --bot NAME=COMMAND (repeat) and/or a tournament file (--config, see "
        "examples/tournament.toml). Results go to the output folder: standings.json/.csv, pairs.csv, "
        "matches.csv, results.jsonl (the progress log), replays/ and logs/.",
        EXIT_CODES,
    ]
)

tournament_app = typer.Typer(
    help=HELP, invoke_without_command=True, no_args_is_help=False, add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)  # fmt: skip


class _Terminated(Exception):
    pass


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise _Terminated()


def _build(
    config_path: Path | None, bots: list[str], rules: str | None, rounds: int | None, fmt: str | None,
    gauntlet: str | None, pairs: int | None, seed: int | None, startup_ms: int | None, move_ms: int | None,
    bank_ms: int | None,
) -> TournamentConfig:  # fmt: skip
    from referee.tournament import (
        Format,
        Time,
        TournamentConfig,
        load_config,
        parse_bot,
        resolve_rules,
        with_rounds,
    )

    base = load_config(config_path) if config_path else None
    specs = [*(base.bots if base else ()), *(parse_bot(b) for b in bots)]
    if rules is not None:
        rule_set = resolve_rules(rules, rounds)
    elif base is not None:
        rule_set = base.rules if rounds is None else with_rounds(base.rules, rounds)
    else:
        rule_set = resolve_rules("guide", rounds)
    if gauntlet is not None and fmt is None:
        fmt = Format.GAUNTLET.value
    try:
        format_ = Format(fmt) if fmt is not None else (base.format if base else Format.ROUND_ROBIN)
    except ValueError:
        fail(f"--format {fmt!r}: choose round-robin or gauntlet")
    t0 = base.time if base else Time()
    return TournamentConfig(
        bots=tuple(specs),
        rules=rule_set,
        format=format_,
        gauntlet=gauntlet if gauntlet is not None else (base.gauntlet if base else None),
        pairs=pairs if pairs is not None else (base.pairs if base else 10),
        seed=seed if seed is not None else (base.seed if base else secrets.randbits(52)),
        seed_drawn=seed is None and (base is None or base.seed_drawn),
        sandbox=base.sandbox if base else "auto",
        bot_env=base.bot_env if base else (),
        time=Time(
            startup_ms if startup_ms is not None else t0.startup_ms,
            move_ms if move_ms is not None else t0.move_ms,
            bank_ms if bank_ms is not None else t0.bank_ms,
        ),
    )


@tournament_app.callback()
def tournament_cmd(
    ctx: typer.Context,
    bot: Annotated[list[str] | None, typer.Option("--bot", "-b", help="A bot as NAME=COMMAND; repeat.")] = None,
    config: Annotated[Path | None, typer.Option("--config", "-c", help="A tournament file (TOML).")] = None,
    rules: Annotated[str | None, typer.Option("--rules", "-r", help="A rules preset or rules file.")] = None,
    rounds: Annotated[int | None, typer.Option("--rounds", min=1, help="Override the rules' rounds per match.")] = None,
    fmt: Annotated[str | None, typer.Option("--format", help="round-robin (default) or gauntlet.")] = None,
    gauntlet: Annotated[
        str | None,
        typer.Option("--gauntlet", help="Gauntlet: this bot against each other bot (default: the first)."),
    ] = None,
    pairs: Annotated[
        int | None,
        typer.Option("--pairs", "-n", min=1, help="Deal pairs per pairing (2 matches each); default 10."),
    ] = None,
    seed: Annotated[
        int | None,
        typer.Option("--seed", help="Tournament seed (default: drawn at random, so bots cannot predict the deals)."),
    ] = None,
    startup_ms: Annotated[int | None, typer.Option("--startup-ms", min=0, help="Handshake time.")] = None,
    move_ms: Annotated[int | None, typer.Option("--move-ms", min=0, help="Time per decision.")] = None,
    bank_ms: Annotated[int | None, typer.Option("--bank-ms", min=0, help="Time bank per match.")] = None,
    jobs: Annotated[
        int | None, typer.Option("--jobs", "-j", min=1, help="Matches in parallel (default: the CPU count).")
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Output folder (default tournament-DATE-TIME).")
    ] = None,
    resume_dir: Annotated[
        Path | None, typer.Option("--resume", help="Continue the interrupted tournament in this folder.")
    ] = None,
    shard: Annotated[str | None, typer.Option("--shard", help="Play shard K of N (K/N); merge the folders.")] = None,
    sprt_text: Annotated[
        str | None,
        typer.Option(
            "--sprt",
            help="elo0,elo1[,alpha,beta]: stop once the first bot is shown "
            "stronger by elo1 (H1) or not stronger than elo0 (H0). Two bots.",
        ),
    ] = None,
    fail_if_worse: Annotated[bool, typer.Option("--fail-if-worse", help="Exit 1 if the SPRT accepts H0.")] = False,
    min_score: Annotated[
        float | None,
        typer.Option("--min-score", help="Exit 1 if the first/gauntlet bot scores below X (0..1)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the standings as JSON instead of the table.")] = False,
    html_pages: Annotated[
        bool,
        typer.Option(
            "--html/--no-html",
            help="At the end, write a viewer page per match and index.html in the output folder "
            "(about 50 ms and 150 kB a match; also later with: replay html DIR).",
        ),
    ] = True,
    sandbox_mode: Annotated[str | None, typer.Option("--sandbox", help=SANDBOX_HELP)] = None,
    bot_env: Annotated[list[str] | None, typer.Option("--bot-env", help=BOT_ENV_HELP)] = None,
) -> None:
    """Run a tournament (or continue one with --resume). See the exit codes above."""
    if ctx.invoked_subcommand is not None:
        return
    from referee.tournament import RunOptions, Sprt, default_jobs, parse_shard, play, resume, start
    from referee.tournament.report import to_json

    n_jobs = jobs or default_jobs()
    store = None
    try:
        if resume_dir is not None:
            given = [
                bot,
                config,
                rules,
                rounds,
                fmt,
                gauntlet,
                pairs,
                seed,
                startup_ms,
                move_ms,
                bank_ms,
                out,
            ]
            given += [shard, sprt_text, sandbox_mode, bot_env]
            if any(v for v in given) or fail_if_worse or min_score is not None:
                fail("--resume takes only --jobs (and --json): the tournament's options are in its folder")
            store = resume(resume_dir, n_jobs)
            sandbox_options(store.config.sandbox, None)
            for w in store.warnings:
                typer.echo(f"koikoi-referee: warning: {w}", err=True)
        else:
            if not bot and config is None:
                fail("name the bots with --bot NAME=COMMAND (twice or more) or a tournament file with --config")
            cfg = _build(config, bot or [], rules, rounds, fmt, gauntlet, pairs, seed, startup_ms, move_ms, bank_ms)
            cfg = with_sandbox(cfg, sandbox_mode, bot_env)
            sandbox_options(cfg.sandbox, None)  # a one-line error (bwrap cannot work) or warning (auto falls back)
            if cfg.seed_drawn:
                if shard:
                    fail("--shard needs --seed (or a seed in the tournament file): every shard must share the schedule")
                typer.echo(f"seed {cfg.seed} (drawn at random; --seed {cfg.seed} repeats this tournament)", err=True)
            options = RunOptions(
                jobs=n_jobs,
                shard=parse_shard(shard) if shard else (1, 1),
                sprt=Sprt.parse(sprt_text) if sprt_text else None,
                fail_if_worse=fail_if_worse,
                min_score=min_score,
            )
            folder = out or Path(f"tournament-{time.strftime('%Y%m%d-%H%M%S')}")
            store = start(cfg, options, folder)
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
        try:
            outcome = play(store, stream=sys.stderr if as_json else sys.stdout)
        finally:
            signal.signal(signal.SIGTERM, previous)
    except (KeyboardInterrupt, _Terminated):
        where = resume_dir or (store.root if store is not None else out)
        typer.echo(
            f"koikoi-referee: interrupted; continue with: koikoi-referee tournament --resume {where}",
            err=True,
        )
        sys.exit(130)
    except RefereeError as exc:
        fail(str(exc))
    index = _write_pages(store.root) if html_pages else None
    if as_json:
        extra: dict[str, object] = {"folder": str(store.root), "complete": outcome.complete}
        if index is not None:
            extra["index"] = str(index)
        typer.echo(json.dumps(to_json(outcome.standings, extra)))
    else:
        typer.echo(outcome.table)
        typer.echo(f"results in {store.root}" + (f"; replays to view: {index}" if index is not None else ""))
    for line in outcome.failures:
        typer.echo(f"koikoi-referee: CI gate failed: {line}", err=True)
    sys.exit(outcome.exit_code)


def _write_pages(root: Path) -> Path | None:
    """The viewer pages and index of a tournament folder; a failure is a warning (the results are kept)."""
    from referee.replay.html import ViewerError, write_index

    try:
        return write_index(root)
    except ViewerError as exc:
        typer.echo(f"koikoi-referee: warning: no viewer pages: {exc}", err=True)
        return None


@tournament_app.command("merge")
def merge_cmd(
    dirs: Annotated[list[Path], typer.Argument(help="Shard folders of one tournament.")],
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write the merged tournament folder here.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the standings as JSON instead of the table.")] = False,
) -> None:
    """Combine shard folders into one standings table.

    Refuses folders of different tournaments or overlapping shards and reports missing matches. Exit codes as
    for the tournament; the CI gates apply to the merged result.
    """
    from referee.tournament import merge
    from referee.tournament.report import to_json

    try:
        result = merge(dirs, out)
    except RefereeError as exc:
        fail(str(exc))
    for w in result.warnings:
        typer.echo(f"koikoi-referee: warning: {w}", err=True)
    if result.missing:
        shown = ", ".join(result.missing[:5]) + (" ..." if len(result.missing) > 5 else "")
        typer.echo(f"koikoi-referee: warning: {len(result.missing)} scheduled match(es) missing: {shown}", err=True)
    if as_json:
        typer.echo(json.dumps(to_json(result.standings, {"complete": not result.missing, "missing": result.missing})))
    else:
        typer.echo(result.table)
    for line in result.failures:
        typer.echo(f"koikoi-referee: CI gate failed: {line}", err=True)
    sys.exit(1 if result.failures else 0)


def register(app: typer.Typer) -> None:
    """Add the ``tournament`` group (run, ``--resume``, ``merge``) to the app."""
    app.add_typer(tournament_app, name="tournament")
