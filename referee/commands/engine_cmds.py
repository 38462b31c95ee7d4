"""``score`` and ``rules``: the rules engine from the command line."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from referee.commands import fail
from referee.engine import PRESETS, EngineError, load_rules, score
from referee.text import plural


def score_cmd(
    cards: Annotated[list[str], typer.Argument(help="Captured card ids, e.g. pine-crane cherry-curtain.")],
    rules: Annotated[str, typer.Option("--rules", "-r", help="A preset name or a rules file.")] = "guide",
    koikoi_calls: Annotated[
        int,
        typer.Option(
            "--koikoi-calls", "-k", min=0, max=48, help="Koi-koi calls made by this player this round."
        ),
    ] = 0,
    opponent_calls: Annotated[
        int,
        typer.Option(
            "--opponent-koikoi-calls", "-o", min=0, max=48,
            help="Koi-koi calls made by the other player this round (they double a stop under "
            "double_after_opponent_koikoi).",
        ),
    ] = 0,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print JSON: {yaku: [{name, points, cards}], total}.")
    ] = False,
) -> None:
    """Score a capture pile: its yaku and what a stop would score after K koi-koi calls."""
    if len(set(cards)) != len(cards):
        fail("a card id is repeated")
    try:
        r = load_rules(rules)
        allowed = r.koikoi_calls_per_round
        if allowed and koikoi_calls + opponent_calls > allowed:
            fail(f"{koikoi_calls + opponent_calls} koi-koi calls in a round: the rules {r.name} allow "
                 f"{plural(allowed, 'call')} a round, both players together (koikoi_calls_per_round)")  # fmt: skip
        result = score(cards, r, koikoi_calls, opponent_calls)
    except EngineError as exc:
        fail(str(exc))
    if as_json:
        typer.echo(json.dumps(result.to_json()))
        return
    if not result.yaku:
        typer.echo("no yaku (total 0)")
        return
    for y in result.yaku:
        typer.echo(f"{y.name.value:<22} {y.points:>3}  {' '.join(y.card_ids())}")
    extra = f" after {koikoi_calls} koi-koi call(s)" if koikoi_calls else ""
    if opponent_calls:
        extra += f" ({opponent_calls} by the opponent)"
    typer.echo(f"{'yaku points':<22} {result.base:>3}")
    typer.echo(f"{'total' + extra:<22} {result.total:>3}")


def rules_cmd(
    preset: Annotated[
        str | None, typer.Argument(help="A preset name or rules file to print in full; omit to list the presets.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of TOML.")] = False,
) -> None:
    """List the presets, or print one preset's (or rules file's) full option set, ready to copy and edit."""
    if preset is None:
        if as_json:
            typer.echo(json.dumps({name: r.to_dict(complete=True) for name, r in PRESETS.items()}, indent=2))
            return
        for name, r in PRESETS.items():
            typer.echo(f"{name:<14} {plural(r.rounds, 'round')}, koi-koi scoring {r.koikoi_scoring.value}")
        return
    try:
        r = load_rules(preset)
    except EngineError as exc:
        fail(str(exc))
    typer.echo(json.dumps(r.to_dict(complete=True), indent=2) if as_json else r.to_toml(), nl=as_json)


def register(app: typer.Typer) -> None:
    """Add ``score`` and ``rules`` to the app."""
    app.command("score")(score_cmd)
    app.command("rules")(rules_cmd)
