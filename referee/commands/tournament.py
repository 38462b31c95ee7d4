"""``tournament``: run, resume or merge a tournament between bot programs.

``koikoi-referee tournament [OPTIONS]`` runs one (the group's own callback), ``--resume DIR`` continues an
interrupted one, ``koikoi-referee tournament merge DIR...`` combines shards, ``tournament add DIR`` takes new
entrants (a ladder step) and ``tournament verify DIR`` checks the deals against the seed's commitment.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from referee.commands import fail
from referee.commands.bot_options import (
    BOT_ENV_HELP,
    CPU_HELP,
    CPUS_HELP,
    FILE_HELP,
    MEMORY_HELP,
    PONDER_HELP,
    PROCESSES_HELP,
    PYTHON_HELP,
    REQUIRE_CGROUPS_HELP,
    SANDBOX_HELP,
    SETTING_FLAGS,
)
from referee.errors import Interrupted, RefereeError

if TYPE_CHECKING:
    from referee.seats.settings import BotSettings
    from referee.tournament.launch import Report

EXIT_CODES = (
    "Exit codes: 0 the tournament finished and every CI gate passed; 1 a CI gate failed (--fail-if-worse "
    "and the SPRT accepted H0, --fail-unless-better and it did not accept H1, the first/gauntlet bot's score "
    "rate below --min-score, or with any of these a bot forfeiting more than --max-forfeits of its games); 2 bad input "
    "(options, tournament file, bot command, output folder, an edited results line) or an output that cannot "
    "be written (a full disk); 130 interrupted (continue with --resume DIR: interrupted deal pairs are dealt "
    "afresh)."
)

HELP = "\n\n".join(
    [
        "Play a tournament between bot programs: round-robin or gauntlet, duplicate deal pairs (every deal "
        "played twice with the seats swapped), parallel matches on reused bot processes, standings with score"
        " rates, Elo and error bars, an SPRT for CI, resumable output and shards.",
        "Bots come from --bot NAME=COMMAND (repeat) and/or a tournament file (--config, see "
        "examples/tournament.toml). Results go to the output folder: standings.json/.csv, pairs.csv, "
        "matches.csv, results.jsonl (the progress log), replays/ and logs/.",
        "Every bot gets the time control and limits of the flags (--bot-memory-mb, --bot-cpu-s, --bot-processes, "
        "--bot-env, --bot-file, --python) or of the file's [time], [limits] and [bot_env]; one bot's own settings "
        "come from --bot-option NAME:key=value or its table in the file (name = {command = ..., memory_mb = 8192}).",
        "The seed decides every deal: keep it secret. It is drawn at random unless given; shards share one from "
        "--seed-file FILE or $KOIKOI_SEED (read, then removed from the environment bots inherit). Result lines "
        "carry a MAC under the key of --key FILE or the default key, made on first use.",
        EXIT_CODES,
    ]
)

tournament_app = typer.Typer(
    help=HELP, invoke_without_command=True, no_args_is_help=False, add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)  # fmt: skip


UntilSeparated = Annotated[
    bool,
    typer.Option(
        "--until-separated",
        help="After the schedule, add deal pairs where neighbouring ranks overlap most (by the joint ratings' "
        "uncertainty), round by round, until every two adjacent ranks are separated at 95% (the likelihood "
        "of superiority) or --max-pairs is spent; the report says how many pairs and games that took.",
    ),
]
"""``--until-separated`` of ``tournament`` and ``tournament add``."""
MaxPairs = Annotated[
    int | None,
    typer.Option(
        "--max-pairs", min=0, max=1_000_000,
        help="The budget of pairs --until-separated adds (in a ladder step: this step's); default 200.",
    ),
]  # fmt: skip
"""``--max-pairs`` of ``tournament`` and ``tournament add``."""

FLAGS = {
    **SETTING_FLAGS, "bots": "--bot", "config": "--config", "rules": "--rules", "rounds": "--rounds",
    "format": "--format", "gauntlet": "--gauntlet", "pairs": "--pairs", "seed": "--seed", "seed_file": "--seed-file",
    "out": "--out", "shard": "--shard", "sprt": "--sprt", "fail_if_worse": "--fail-if-worse",
    "fail_unless_better": "--fail-unless-better", "max_forfeits": "--max-forfeits", "quiet": "--quiet",
    "min_score": "--min-score", "bot_env": "--bot-env", "compress": "--compress", "bot_options": "--bot-option",
    "deals": "--deals", "event": "--event", "event_description": "--event-description",
    "until_separated": "--until-separated", "max_pairs": "--max-pairs", "resume": "--resume", "jobs": "--jobs",
    "html": "--html", "backend": "--backend", "ray_address": "--ray-address", "ray_working_dir": "--ray-working-dir",
    "forfeit_broken": "--forfeit-broken", "live_every": "--live-every", "rating_interval": "--rating-interval",
    "retire": "--retire",
}  # fmt: skip
"""The flag of each option of the tournament commands (:class:`~referee.tournament.launch.TournamentRequest`'s
fields, the bot settings, ``tournament add``'s), for the errors that name a setting."""


@tournament_app.callback()
def tournament_cmd(
    ctx: typer.Context,
    bot: Annotated[
        list[str] | None,
        typer.Option(
            "--bot", "-b", help="A bot as NAME=COMMAND, or a bot folder holding a bot.toml (named by it); repeat."
        ),
    ] = None,
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
        typer.Option(
            "--seed",
            min=0,
            max=2**64 - 1,
            help="Tournament seed (default: drawn at random, so bots cannot predict the deals). On the command "
            "line it is visible to other programs: prefer --seed-file.",
        ),
    ] = None,
    startup_ms: Annotated[int | None, typer.Option("--startup-ms", min=1, help="Handshake time.")] = None,
    move_ms: Annotated[int | None, typer.Option("--move-ms", min=1, help="Time per decision.")] = None,
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
    fail_unless_better: Annotated[
        bool,
        typer.Option(
            "--fail-unless-better",
            help="Exit 1 unless the SPRT accepts H1: a run that reaches neither bound (its pairs spent) fails too.",
        ),
    ] = False,
    max_forfeits: Annotated[
        float | None,
        typer.Option(
            "--max-forfeits",
            help="With a CI gate: exit 1 when a bot forfeits more than this share of its games (crash, timeout, "
            "illegal action...), whatever the score: such a result says nothing of strength. Default 0.1; 1: off.",
        ),
    ] = None,
    min_score: Annotated[
        float | None,
        typer.Option("--min-score", help="Exit 1 if the first/gauntlet bot scores below X (0..1)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the standings as JSON instead of the table.")] = False,
    html_pages: Annotated[
        bool,
        typer.Option(
            "--html/--no-html",
            help="Write a viewer page per match as it is recorded (by the worker that played it) and, at the end, "
            "index.html in the output folder (about 50 ms and 150 kB a match; also later with: replay html DIR).",
        ),
    ] = True,
    seed_file: Annotated[
        Path | None,
        typer.Option("--seed-file", help="Read the secret tournament seed from this file (shards share it)."),
    ] = None,
    key: Annotated[
        Path | None,
        typer.Option("--key", help="Sign (and on --resume check) the results with this key file."),
    ] = None,
    sandbox_mode: Annotated[str | None, typer.Option("--sandbox", help=SANDBOX_HELP)] = None,
    bot_env: Annotated[list[str] | None, typer.Option("--bot-env", help=BOT_ENV_HELP)] = None,
    backend: Annotated[
        str,
        typer.Option(
            "--backend",
            help="Where matches run: local (worker processes here) or ray (a Ray cluster; pip install "
            "'koikoi-referee[ray]'; -j is then the matches in parallel across the cluster). Also with --resume.",
        ),
    ] = "local",
    ray_address: Annotated[
        str | None,
        typer.Option(
            "--ray-address", help="With --backend ray: the cluster to join, HOST:PORT (default: Ray on this machine)."
        ),
    ] = None,
    ray_working_dir: Annotated[
        Path | None,
        typer.Option(
            "--ray-working-dir",
            help="With --backend ray: a folder Ray copies to every node; the bots start from the copy (run the "
            "referee from this folder, so the bot commands read the same there). See docs/cluster.md.",
        ),
    ] = None,
    compress: Annotated[
        bool,
        typer.Option("--compress", help="Write the replays gzip-compressed (ID.jsonl.gz, about 30% of the size)."),
    ] = False,
    bot_memory_mb: Annotated[
        int | None, typer.Option("--bot-memory-mb", min=0, max=1 << 30, help=MEMORY_HELP + " [default: 2048]")
    ] = None,
    bot_cpu_s: Annotated[int | None, typer.Option("--bot-cpu-s", min=0, max=10**9, help=CPU_HELP)] = None,
    bot_processes: Annotated[
        int | None, typer.Option("--bot-processes", min=0, max=1 << 20, help=PROCESSES_HELP + " [default: 256]")
    ] = None,
    bot_cpus: Annotated[
        float | None, typer.Option("--bot-cpus", min=0, max=1024, help=CPUS_HELP)
    ] = None,
    ponder: Annotated[bool, typer.Option("--ponder", help=PONDER_HELP)] = False,
    require_cgroups: Annotated[bool, typer.Option("--require-cgroups", help=REQUIRE_CGROUPS_HELP)] = False,
    bot_file: Annotated[list[str] | None, typer.Option("--bot-file", help=FILE_HELP)] = None,
    python: Annotated[str | None, typer.Option("--python", help=PYTHON_HELP)] = None,
    bot_option: Annotated[
        list[str] | None,
        typer.Option(
            "--bot-option",
            help="NAME:key=value, a setting of one bot (repeat), over the others: startup_ms, move_ms, bank_ms, "
            "memory_mb, cpu_s, processes, cpus, env (NAME=VALUE), file (a path), python; e.g. "
            "java:memory_mb=8192.",
        ),
    ] = None,
    deals: Annotated[
        Path | None,
        typer.Option(
            "--deals",
            help="A deal suite (JSON lines, one deal sequence a line; see: deals generate): deal pair k of every "
            "pairing opens with sequence k, cycling; the seed deals the rounds after it.",
        ),
    ] = None,
    event: Annotated[
        str | None, typer.Option("--event", help="The event's name, the title of its pages (over [event] name).")
    ] = None,
    event_description: Annotated[
        str | None, typer.Option("--event-description", help="A line about the event, shown on its home page.")
    ] = None,
    live_every: Annotated[
        int,
        typer.Option(
            "--live-every", min=0, metavar="N",
            help="While the run goes on, rewrite the standings files and the home page every N results "
            "(\"running: N of M\", the page reloading itself every 30 s; 0: only at the end).",
        ),
    ] = 0,
    rating_interval: Annotated[
        int,
        typer.Option(
            "--rating-interval", min=0, metavar="N",
            help="Print interim standings every N complete pairs (0: only at the end).",
        ),
    ] = 0,
    quiet: Annotated[
        bool,
        typer.Option("--quiet", "-q", help="No progress line (or bar) a finished match: a CI log keeps the "
                     "seed commitment, warnings, interim and final standings."),
    ] = False,
    forfeit_broken: Annotated[
        bool,
        typer.Option(
            "--forfeit-broken",
            help="A bot that does not start and answer hello before the first match plays anyway and forfeits "
            "(default: a one-line error naming it, exit 2).",
        ),
    ] = False,
    until_separated: UntilSeparated = False,
    max_pairs: MaxPairs = None,
) -> None:
    """Run a tournament (or continue one with --resume). See the exit codes above."""
    if ctx.invoked_subcommand is not None:
        return
    from referee.tournament.launch import TournamentRequest, run

    settings = _settings(bot_memory_mb, bot_cpu_s, bot_processes, bot_cpus, bot_file or [], python)
    request = TournamentRequest(
        bots=tuple(bot or ()), config=config, rules=rules, rounds=rounds, format=fmt, gauntlet=gauntlet,
        pairs=pairs, seed=seed, seed_file=seed_file, startup_ms=startup_ms, move_ms=move_ms, bank_ms=bank_ms,
        jobs=jobs, out=out, resume=resume_dir, shard=shard, sprt=sprt_text, fail_if_worse=fail_if_worse,
        fail_unless_better=fail_unless_better, max_forfeits=max_forfeits, min_score=min_score, html=html_pages,
        key=key, sandbox=sandbox_mode, bot_env=tuple(bot_env or ()),
        backend=backend, ray_address=ray_address, ray_working_dir=ray_working_dir, compress=compress,
        settings=settings, ponder=ponder, require_cgroups=require_cgroups, bot_options=tuple(bot_option or ()),
        deals=deals, event=event, event_description=event_description, forfeit_broken=forfeit_broken,
        live_every=live_every, rating_interval=rating_interval, until_separated=until_separated, max_pairs=max_pairs,
        quiet=quiet,
    )  # fmt: skip
    _play_and_report(run, request, as_json)


def _settings(memory_mb: int | None, cpu_s: int | None, processes: int | None, cpus: float | None,
              files: list[str], python: str | None) -> BotSettings:  # fmt: skip
    """Every bot's settings given by flags (readable files and an interpreter's path made absolute)."""
    from referee.seats.settings import BotSettings, SettingsError, combine, parse_setting

    try:
        flags = BotSettings(memory_mb=memory_mb, cpu_s=cpu_s, processes=processes, cpus=cpus)
        paths = [parse_setting("file", f, f"--bot-file {f!r}") for f in files]
        interpreter = [] if python is None else [parse_setting("python", python, "--python")]
        return combine([flags, *paths, *interpreter])
    except SettingsError as exc:
        fail(exc.naming(FLAGS))


def _play_and_report(play: Callable[..., Report], request: Any, as_json: bool) -> None:
    """Run ``play(request)`` (a tournament or a ladder step), then print its report; an interruption exits with
    its code, a referee error is one line (exit 2)."""
    try:
        report = play(request, stream=sys.stderr if as_json else sys.stdout, warn=_warn)
    except Interrupted as exc:
        typer.echo(f"koikoi-referee: {exc}", err=True)
        sys.exit(exc.code)
    except RefereeError as exc:
        fail(exc.naming(FLAGS))
    _print_report(report, as_json)


def _print_report(report: Report, as_json: bool) -> NoReturn:
    """Print a run's standings (a table or JSON), its CI gate failures, and exit with its code."""
    if as_json:
        typer.echo(json.dumps(report.to_json()))
    else:
        typer.echo(report.outcome.table)
        index = report.index
        typer.echo(f"results in {report.root}" + (f"; replays to view: {index}" if index is not None else ""))
    for line in report.outcome.failures:
        typer.echo(f"koikoi-referee: CI gate failed: {line}", err=True)
    sys.exit(report.exit_code)


ADD_HELP = "\n\n".join(
    [
        "A ladder step: add entrants (or a new version of one, the old kept or retired with --retire) to the "
        "tournament in DIR and play only the pairings that involve them: each entrant against every active bot "
        "(a gauntlet: against the gauntlet bot) and the other entrants, with the tournament's pairs per pairing, "
        "seed, deal suite, time control and limits. The results are appended to DIR's results.jsonl, signed "
        "like the others (the lines already there are kept byte for byte); then the joint ratings are refitted "
        "over every game and the report and pages rewritten. `tournament verify DIR` checks the whole folder.",
        "A subcommand of `tournament`, beside merge and verify, because it works on a tournament folder: the "
        "folder's description records the step (signed), so an interrupted add continues with "
        "`tournament --resume DIR`.",
        "With --until-separated, pairs are then added where adjacent ranks overlap most until every two adjacent "
        "ranks (retired bots left out) are separated at 95%, or --max-pairs (this step's budget) is spent.",
        EXIT_CODES,
    ]
)


@tournament_app.command("add", help=ADD_HELP)
def add_cmd(
    folder: Annotated[Path, typer.Argument(metavar="DIR", help="The tournament folder (finished or interrupted).")],
    bot: Annotated[
        list[str] | None,
        typer.Option("--bot", "-b", help="An entrant as NAME=COMMAND, or a bot folder holding a bot.toml; repeat."),
    ] = None,
    retire: Annotated[
        list[str] | None,
        typer.Option("--retire", help="A bot that plays no new pairing (its games still count); repeat."),
    ] = None,
    jobs: Annotated[
        int | None, typer.Option("--jobs", "-j", min=1, help="Matches in parallel (default: the CPU count).")
    ] = None,
    key: Annotated[
        Path | None, typer.Option("--key", help="The key file the folder's results are signed with.")
    ] = None,
    until_separated: UntilSeparated = False,
    max_pairs: MaxPairs = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the standings as JSON instead of the table.")] = False,
    html_pages: Annotated[
        bool, typer.Option("--html/--no-html", help="Write the new matches' viewer pages, then index.html.")
    ] = True,
    forfeit_broken: Annotated[
        bool,
        typer.Option("--forfeit-broken", help="An entrant that does not answer hello plays anyway and forfeits."),
    ] = False,
) -> None:
    """Add entrants to a tournament folder and play their pairings."""
    from referee.tournament.ladder import AddRequest, add

    request = AddRequest(
        folder, tuple(bot or ()), tuple(retire or ()), jobs, key, until_separated, max_pairs, html_pages,
        forfeit_broken,
    )  # fmt: skip
    _play_and_report(add, request, as_json)


def _warn(message: str) -> None:
    typer.echo(f"koikoi-referee: warning: {message}", err=True)


@tournament_app.command("merge")
def merge_cmd(
    dirs: Annotated[list[Path], typer.Argument(help="Shard folders of one tournament.")],
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write the merged tournament folder here.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the standings as JSON instead of the table.")] = False,
    key: Annotated[
        Path | None, typer.Option("--key", help="Check (and sign the merged results with) this key file.")
    ] = None,
    partial: Annotated[
        bool,
        typer.Option("--partial", help="Merge even when shards or matches are missing (they are listed)."),
    ] = False,
    html_pages: Annotated[
        bool,
        typer.Option(
            "--html/--no-html", help="With -o, write the merged folder's index.html and a viewer page per match."
        ),
    ] = True,
) -> None:
    """Combine shard folders into one standings table.

    Refuses folders of different tournaments, overlapping shards, results lines whose signature does not
    check, and (without --partial) a missing shard or match: exit 2. Otherwise exit codes as for the
    tournament; the CI gates apply to the merged result.
    """
    from referee.tournament.launch import merge_folders

    try:
        report = merge_folders(dirs, out, key, partial=partial, html=html_pages)
    except RefereeError as exc:
        fail(exc.naming(FLAGS))
    for w in report.warnings:
        _warn(w)
    typer.echo(json.dumps(report.to_json()) if as_json else report.result.table)
    for line in report.result.failures:
        typer.echo(f"koikoi-referee: CI gate failed: {line}", err=True)
    sys.exit(report.exit_code)


@tournament_app.command("verify")
def verify_cmd(
    folder: Annotated[Path, typer.Argument(help="A tournament folder (its tournament.json, results and replays).")],
    seed: Annotated[
        int | None, typer.Option("--seed", min=0, help="The published seed (default: the folder's own).")
    ] = None,
    commitment: Annotated[
        str | None,
        typer.Option("--commitment", help="The commitment printed at the start (default: the one standings.json"
                     " published)."),
    ] = None,
    key: Annotated[
        Path | None,
        typer.Option("--key", help="Check the signatures with this key file (default: the default key, if any)."),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the findings as one JSON object (ok, problems, checked...).")
    ] = False,
) -> None:
    """Check that every deal is the one the seed committed to at the start gives: the seed opens the
    commitment, every match's deal derives from it, every replay re-simulates to the result recorded for it, no
    finished game is missing from the results or was dealt afresh, the published report of a complete folder is
    the one its results give, and (with a key) every signature checks; note each bot that played with more than
    one version of its files. Exit 0 when all agree, 1 when something does not, 2 for a folder that cannot be
    read."""
    from referee.tournament.folder import signing_key
    from referee.tournament.verify import verify_folder, verify_text

    try:
        report = verify_folder(folder, seed, commitment, signing_key(key, create=False))
    except RefereeError as exc:
        fail(exc.naming(FLAGS))
    typer.echo(json.dumps(report.to_json(folder)) if as_json else verify_text(report, folder))
    sys.exit(0 if report.ok else 1)


def register(app: typer.Typer) -> None:
    """Add the ``tournament`` group (run, ``--resume``, ``merge``) to the app."""
    app.add_typer(tournament_app, name="tournament")
