"""The tournament's pages: ``index.html``, its home page, and a viewer page per match.

The home page holds the leaderboard (rank, name, games, W/D/L, score rate and Elo with their 95% intervals,
likelihood of superiority over the next bot), the crosstable (every pairing's score rate, linked to its
matches), the per-bot statistics (decision times, time bank, memory, forfeits, links to the stderr logs), a
picture (inline SVG) of how the ratings settled as the results came in, and the list of matches. Every match
page shows the tournament's names for its bots and links back to the home page and to the previous and next
match. A match whose replay cannot be drawn (a bot that never said ``hello``) gets a page with its result and
the reason. Pages follow :mod:`referee.replay.html`: self-contained, escaped, nothing loaded from the network.
"""

from __future__ import annotations

import html
import os
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote

from referee.replay.html import ViewerError, asset, fill, nav_links, write_html
from referee.text import scores_text
from referee.tournament.columns import LEADERBOARD_HEAD, STATS_HEAD, leaderboard_cells, stats_cells
from referee.tournament.config import TournamentError
from referee.tournament.progress import describe
from referee.tournament.records import Record
from referee.tournament.standings import Standings, compute, rating_history
from referee.tournament.store import DESCRIPTION, Store, existing_replay, replay_file, write_atomic

HOME = "index.html"
"""The home page's file name in the tournament folder."""

COLOURS = ("#ffe27a", "#4dd0e1", "#f48fb1", "#aed581", "#ffb74d", "#b39ddb", "#e57373", "#90caf9", "#fff176",
           "#80cbc4")  # fmt: skip
"""The line colour of each bot in the ratings picture (repeated past ten bots)."""

MAX_LOGS = 5
"""Stderr logs linked per bot on the home page (those of its forfeits first)."""


def _e(text: object) -> str:
    return html.escape(str(text))


def _table(table_id: str, head: Sequence[str], rows: Sequence[str]) -> str:
    ths = "".join(f"<th>{_e(h)}</th>" for h in head)
    return f'<table id="{table_id}"><thead><tr>{ths}</tr></thead><tbody>\n' + "\n".join(rows) + "\n</tbody></table>"


def match_page(match_id: str) -> str:
    """A match page's path from the tournament folder."""
    return f"replays/{match_id}.html"


def _match_href(root: Path, match_id: str) -> str:
    page = match_page(match_id)
    if (root / page).exists():
        return quote(page)
    replay = existing_replay(root, match_id)
    return quote(page if replay is None else replay.relative_to(root).as_posix())


def _leaderboard(st: Standings) -> str:
    rows = []
    for i, b in enumerate(st.bots, 1):
        cells = "".join(f"<td>{_e(c)}</td>" for c in leaderboard_cells(i, b))
        rows.append(f'<tr data-bot="{_e(b.name)}">{cells}</tr>')
    return _table("leaderboard", LEADERBOARD_HEAD, rows)


def _asymmetry(st: Standings) -> str:
    """The asymmetry test's verdict: a line per flagged bot, or one saying that none is."""
    flagged = st.flagged
    if not flagged:
        return ('<p id="asymmetry">Asymmetry test: no bot scored significantly better (1% level) in the '
                "second-played game of its pairs.</p>")  # fmt: skip
    lines = "".join(f'<li data-bot="{_e(b.name)}">{_e(b.asymmetry.text(b.name))}</li>' for b in flagged if b.asymmetry)
    return f'<ul id="asymmetry" class="flagged">{lines}</ul>'


def _crosstable(st: Standings) -> str:
    names = [b.name for b in st.bots]
    cell: dict[tuple[str, str], tuple[float, int, str]] = {}
    for p in st.pairings:
        if p.games and p.score is not None:
            anchor = f"pairing-{p.first}-vs-{p.second}"
            cell[(p.first, p.second)] = (p.score, p.games, anchor)
            cell[(p.second, p.first)] = (1 - p.score, p.games, anchor)
    rows = []
    for a in names:
        tds = []
        for b in names:
            got = cell.get((a, b))
            if a == b:
                tds.append('<td class="self">—</td>')
            elif got is None:
                tds.append("<td></td>")
            else:
                score, games, anchor = got
                text = f"{score * 100:.0f}% ({games})"
                tds.append(f'<td data-vs="{_e(b)}"><a href="#{_e(quote(anchor))}">{_e(text)}</a></td>')
        rows.append(f'<tr data-bot="{_e(a)}"><th>{_e(a)}</th>{"".join(tds)}</tr>')
    return _table("crosstable", ["score of ↓ against →", *names], rows)


def _logs(root: Path, records: Sequence[Record]) -> dict[str, list[str]]:
    """Up to :data:`MAX_LOGS` non-empty stderr logs per bot (of its forfeits first), as folder paths."""
    try:
        with os.scandir(root / "logs") as it:
            found = {e.name for e in it if e.is_file() and e.stat().st_size > 0}
    except OSError:
        return {}
    firsts: dict[str, list[str]] = {}
    rest: dict[str, list[str]] = {}
    for rec in records:
        off = rec.offender
        for name in rec.spec.seats:
            log = f"{rec.spec.match_id}.{name}.log"
            if log in found:
                (firsts if off and off[0] == name else rest).setdefault(name, []).append(f"logs/{log}")
    return {n: (firsts.get(n, []) + rest.get(n, []))[:MAX_LOGS] for n in {*firsts, *rest}}


def _stats(st: Standings, logs: dict[str, list[str]]) -> str:
    rows = []
    for b in st.bots:
        cells = "".join(f"<td>{_e(c)}</td>" for c in stats_cells(b))
        links = " ".join(f'<a href="{_e(quote(p))}">{_e(Path(p).name)}</a>' for p in logs.get(b.name, [])) or "-"
        rows.append(f'<tr data-bot="{_e(b.name)}">{cells}<td class="logs">{links}</td></tr>')
    return _table("stats", [*STATS_HEAD, "stderr logs"], rows)


def _history_svg(st: Standings, records: Sequence[Record]) -> str:
    """An inline SVG line chart of every bot's rating at checkpoints of the results, in their order."""
    if st.config is None or not records:
        return '<p id="history">No results yet.</p>'
    history = rating_history(st.config, records)
    names = [b.name for b in st.config.bots]
    w, h, left, right, top, bottom = 720, 260, 52, 130, 12, 30
    xs = [n for n, _ in history]
    ys = [e for _, elos in history for e in elos.values()]
    lo, hi = min([*ys, -50.0]), max([*ys, 50.0])
    xmax = max(xs[-1], 1)

    def x(n: float) -> float:
        return left + (w - left - right) * n / xmax

    def y(e: float) -> float:
        return top + (h - top - bottom) * (hi - e) / (hi - lo)

    parts = [
        f'<svg id="history" xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
        'role="img" aria-label="ratings as the results came in">',
        f'<rect x="{left}" y="{top}" width="{w - left - right}" height="{h - top - bottom}" fill="#24462f"/>',
        f'<line x1="{left}" x2="{w - right}" y1="{y(0):.1f}" y2="{y(0):.1f}" stroke="#8fb39b" stroke-dasharray="4 3"/>',
        f'<text x="{left - 6}" y="{y(hi) + 10:.1f}" text-anchor="end" fill="#cfe3d4" font-size="11">{hi:+.0f}</text>',
        f'<text x="{left - 6}" y="{y(lo):.1f}" text-anchor="end" fill="#cfe3d4" font-size="11">{lo:+.0f}</text>',
        f'<text x="{left - 6}" y="{y(0) + 4:.1f}" text-anchor="end" fill="#cfe3d4" font-size="11">0</text>',
        f'<text x="{(left + w - right) / 2:.0f}" y="{h - 8}" text-anchor="middle" fill="#cfe3d4" font-size="11">'
        f"matches played (0 to {xmax}); Elo, mean 0</text>",
    ]
    label_y: dict[str, float] = {}
    below = -1e9
    for name in sorted(names, key=lambda n: -history[-1][1][n]):  # labels top-down, at least 13 px apart
        below = label_y[name] = max(y(history[-1][1][name]) + 4, below + 13)
    for k, name in enumerate(names):
        colour = COLOURS[k % len(COLOURS)]
        pts = " ".join(f"{x(n):.1f},{y(elos[name]):.1f}" for n, elos in history)
        parts.append(f'<polyline data-bot="{_e(name)}" fill="none" stroke="{colour}" stroke-width="2" points="{pts}"/>')
        parts.append(
            f'<text x="{w - right + 6}" y="{label_y[name]:.1f}" fill="{colour}" font-size="12">'
            f"{_e(name)} {history[-1][1][name]:+.0f}</text>"
        )
    parts.append("</svg>")
    return "\n".join(parts)


def _matches(root: Path, st: Standings, records: Sequence[Record]) -> str:
    keys = [f"{p.first}-vs-{p.second}" for p in st.pairings]
    by_pairing: dict[str, list[Record]] = {}
    for rec in sorted(records, key=lambda r: r.spec.index):
        key = keys[rec.spec.pairing]
        by_pairing.setdefault(key, []).append(rec)
    rows = []
    for key, recs in by_pairing.items():
        rows.append(
            f'<tr class="pairing" id="pairing-{_e(key)}"><th colspan="4">{_e(key.replace("-vs-", " vs "))}</th></tr>'
        )
        for rec in recs:
            mid = rec.spec.match_id
            link = f'<a href="{_e(_match_href(root, mid))}">{_e(mid)}</a>'
            rows.append(
                f'<tr data-match="{_e(mid)}"><td>{link}</td><td>{_e(rec.spec.seats[0])}</td>'
                f"<td>{_e(rec.spec.seats[1])}</td><td>{_e(describe(rec))}</td></tr>"
            )
    return _table("matches", ["match", "seat 1", "seat 2", "result"], rows)


def home_html(root: Path, st: Standings, records: Sequence[Record], title: str, facts: str) -> str:
    """The home page of a tournament folder; ``records`` in the order they finished."""
    body = "\n".join([
        f'<p id="facts">{_e(facts)}</p>',
        "<h2>Leaderboard</h2>", _leaderboard(st),
        '<p class="note">Elo: a joint Bradley–Terry fit over all games (a draw is half a win), mean 0, with a 95% '
        "interval; LOS: the likelihood that the bot is stronger than the next one.</p>",
        _asymmetry(st),
        "<h2>Crosstable</h2>", _crosstable(st),
        "<h2>Per-bot statistics</h2>", _stats(st, _logs(root, records)),
        "<h2>How the ratings settled</h2>", _history_svg(st, records),
        "<h2>Matches</h2>", _matches(root, st, records),
    ])  # fmt: skip
    return fill(asset("home.html"), {"TITLE": _e(title), "CSS": asset("viewer.css"), "BODY": body})


def write_home(root: Path, st: Standings, records: Sequence[Record], facts: str) -> Path:
    """Write ``index.html`` of the tournament folder ``root`` (records in the order they finished)."""
    path = root / HOME
    write_atomic(path, home_html(root, st, records, f"Tournament {root.resolve().name}", facts))
    return path


def facts_text(st: Standings, scheduled: int, complete: bool) -> str:
    """The home page's line of facts: matches played, rules and seed."""
    cfg = st.config
    done = f"{st.matches} of {scheduled} matches played" + ("" if complete else " (unfinished)")
    rules = f" · rules {cfg.rules.name} · seed {cfg.seed}" if cfg else ""
    return done + rules


def _fallback(rec: Record, nav: str, reason: str) -> str:
    """A match page without the board: the result and why the replay cannot be drawn."""
    a, b = rec.spec.seats
    res = rec.result
    lines = [f"<p>{_e(describe(rec))}</p>", f"<p>Scores {_e(scores_text(list(res.scores)))}, {res.rounds} rounds.</p>"]
    if res.forfeit is not None:
        lines.append(f'<p id="forfeit">{_e(rec.spec.seats[res.forfeit.seat])} forfeits: '
                     f"{_e(res.forfeit.reason.value)}: {_e(res.forfeit.detail[:300])}</p>")  # fmt: skip
    lines.append(f'<p class="note">No board to show: {_e(reason)}</p>')
    body = f'<nav id="links">{nav}</nav>\n' + "\n".join(lines)
    return fill(asset("home.html"), {"TITLE": _e(f"{a} vs {b} — {rec.spec.match_id}"), "CSS": asset("viewer.css"),
                                     "BODY": body})  # fmt: skip


def write_match_pages(root: Path, records: Sequence[Record]) -> int:
    """A viewer page per recorded match (schedule order), with the tournament's names and links to the home
    page and the previous and next match; returns how many show a board."""
    ordered = sorted(records, key=lambda r: r.spec.index)
    drawn = 0
    for k, rec in enumerate(ordered):
        links = [("../index.html", "tournament home")]
        if k > 0:
            links.append((f"{ordered[k - 1].spec.match_id}.html", f"« previous: {ordered[k - 1].spec.match_id}"))
        if k + 1 < len(ordered):
            links.append((f"{ordered[k + 1].spec.match_id}.html", f"next: {ordered[k + 1].spec.match_id} »"))
        nav = nav_links(links)
        mid = rec.spec.match_id
        replay, page = existing_replay(root, mid) or replay_file(root, mid), root / match_page(mid)
        try:
            write_html(replay, page, names=(rec.spec.seats[0], rec.spec.seats[1]), nav=nav)
            drawn += 1
        except ViewerError as exc:
            try:
                page.write_text(_fallback(rec, nav, str(exc)), encoding="utf-8")
            except OSError as err:
                raise ViewerError(f"{page}: cannot write: {err}") from None
    return drawn


def is_tournament(folder: Path) -> bool:
    """Whether ``folder`` is a tournament's output folder (it holds the tournament's description)."""
    return (folder / DESCRIPTION).is_file()


def write_site(root: Path) -> Path:
    """Every page of the tournament folder ``root``: a page per match, then the home page; returns the home
    page. :class:`ViewerError` for a folder that cannot be read or written."""
    try:
        store = Store.open_readonly(root)
    except TournamentError as exc:
        raise ViewerError(str(exc)) from None
    records = list(store.iter_records())  # the order of results.jsonl: the order they finished
    write_match_pages(root, records)
    st = compute(store.config, records, store.options.sprt)
    complete = not store.pending()
    try:
        return write_home(root, st, records, facts_text(st, len(store.schedule), complete))
    except OSError as exc:
        raise ViewerError(f"{root / HOME}: cannot write: {exc}") from None
