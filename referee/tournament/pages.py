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
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote

from referee.replay.html import ViewerError, asset, fill, nav_links, no_board_html, write_html
from referee.text import plural
from referee.tournament.bot_pages import bot_page, write_bot_pages
from referee.tournament.columns import LEADERBOARD_HEAD, STATS_HEAD, leaderboard_cells, stats_cells
from referee.tournament.commitment import commit
from referee.tournament.config import TournamentError
from referee.tournament.folder import DESCRIPTION, Output, existing_replay, replay_file, write_atomic
from referee.tournament.progress import describe
from referee.tournament.records import Record
from referee.tournament.standings import Standings, compute, rating_history, sprt_stop_point
from referee.tournament.stats import SprtState
from referee.tournament.store import Store

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
    for i, b in enumerate(st.bots):
        texts = leaderboard_cells(st.rank_text(i), b)
        link = f'<a href="{_e(quote(bot_page(b.name)))}">{_e(b.name)}</a>'  # the bot's own page
        cells = "".join(f"<td>{link}</td>" if k == 1 else f"<td>{_e(c)}</td>" for k, c in enumerate(texts))
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


def _non_empty(path: Path) -> bool:
    try:
        return path.stat().st_size > 0
    except OSError:
        return False


def _logs(root: Path, records: Sequence[Record]) -> dict[str, list[str]]:
    """Up to :data:`MAX_LOGS` non-empty stderr logs per bot (of its forfeits first), as folder paths."""
    firsts: dict[str, list[str]] = {}
    rest: dict[str, list[str]] = {}
    out = Output(root)
    for rec in records:
        off = rec.offender
        for name in rec.spec.seats:
            log = out.log(rec.spec.match_id, name)
            if _non_empty(log):
                entry = log.relative_to(root).as_posix()
                (firsts if off and off[0] == name else rest).setdefault(name, []).append(entry)
    return {n: (firsts.get(n, []) + rest.get(n, []))[:MAX_LOGS] for n in {*firsts, *rest}}


def _stats(st: Standings, logs: dict[str, list[str]]) -> str:
    rows = []
    for b in st.bots:
        cells = "".join(f"<td>{_e(c)}</td>" for c in stats_cells(b))
        links = " ".join(f'<a href="{_e(quote(p))}">{_e(Path(p).name)}</a>' for p in logs.get(b.name, [])) or "-"
        rows.append(f'<tr data-bot="{_e(b.name)}">{cells}<td class="logs">{links}</td></tr>')
    return _table("stats", [*STATS_HEAD, "stderr logs"], rows)


def _history_svg(st: Standings, history: Sequence[tuple[int, dict[str, float]]]) -> str:
    """An inline SVG line chart of every bot's rating at checkpoints of the results, in their order."""
    if st.config is None or not history:
        return '<p id="history">No results yet.</p>'
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


def home_html(root: Path, st: Standings, records: Sequence[Record], title: str, facts: str, refresh: int = 0) -> str:
    """The home page of a tournament folder; ``records`` in the order they finished; ``refresh``: reload itself
    every so many seconds (a running tournament's page; 0: never). Writes the bot pages it links to as well."""
    history = rating_history(st.config, records) if st.config is not None and records else []
    write_bot_pages(root, st, records, history, title)
    body = "\n".join([
        _event(st),
        f'<p id="facts">{_e(facts)}</p>',
        _sprt(st),
        "<h2>Leaderboard</h2>", _leaderboard(st),
        '<p class="note">Elo: a joint Bradley–Terry fit over all games (a draw is half a win), mean 0, with a 95% '
        "interval; LOS: the likelihood that the bot is stronger than the next one.</p>",
        _asymmetry(st),
        "<h2>Crosstable</h2>", _crosstable(st),
        "<h2>Per-bot statistics</h2>", _stats(st, _logs(root, records)),
        "<h2>How the ratings settled</h2>", _history_svg(st, history),
        "<h2>Matches</h2>", _matches(root, st, records),
    ])  # fmt: skip
    head = f'<meta http-equiv="refresh" content="{refresh:d}">' if refresh > 0 else ""
    return fill(asset("home.html"), {"TITLE": _e(title), "CSS": asset("viewer.css"), "BODY": body, "HEAD": head})


def write_home(root: Path, st: Standings, records: Sequence[Record], facts: str, refresh: int = 0) -> Path:
    """Write ``index.html`` of the tournament folder ``root`` (records in the order they finished; ``refresh``
    as :func:`home_html`'s)."""
    path = root / HOME
    event = st.config.event if st.config is not None else None
    write_atomic(path, home_html(root, st, records, event or f"Tournament {root.resolve().name}", facts, refresh))
    return path


def running_facts(st: Standings, done: int, scheduled: int, running: bool = True) -> str:
    """The facts line of a tournament still playing (``running: N of M``), or of one interrupted."""
    state = f"running: {done} of {scheduled}" if running else f"interrupted after {done} of {scheduled}"
    text = f"{state} matches played ({st.counted} counted, in whole pairs)"
    if not running:
        text += "; continue with --resume"
    cfg = st.config
    return text if cfg is None else f"{text} · rules {cfg.rules.name} · seed commitment {commit(cfg.seed)}"


def facts_text(st: Standings, scheduled: int, complete: bool, shard: tuple[int, int] = (1, 1),
               sprt_stop: int | None = None) -> str:  # fmt: skip
    """The home page's line of facts: matches counted (whole pairs only) of those scheduled, how the run ended,
    the rules, and the seed once the whole tournament is complete (before: the commitment to it)."""
    cfg = st.config
    done = f"{st.counted} of {scheduled} matches counted"
    if st.open_pairs:
        done += f" ({plural(st.open_pairs, 'pair')} with one game played left out)"
    if sprt_stop is not None:
        done += f" · stopped by the SPRT after {plural(sprt_stop, 'pair')}"
        if st.sprt is not None and st.sprt.pairs > sprt_stop:
            done += f" ({st.sprt.pairs - sprt_stop} more in flight finished)"
    elif not complete:
        done += " (unfinished)"
    if cfg is None:
        return done
    seed = (f"seed {cfg.seed} (commitment {commit(cfg.seed)})" if complete and tuple(shard) == (1, 1)
            else f"seed commitment {commit(cfg.seed)}")  # fmt: skip
    return f"{done} · rules {cfg.rules.name} · {seed}"


def _event(st: Standings) -> str:
    cfg = st.config
    if cfg is None or cfg.event is None:
        return ""
    text = f'<p id="event-description">{_e(cfg.event_description)}</p>' if cfg.event_description else ""
    return f'<h2 id="event">{_e(cfg.event)}</h2>{text}'


def _sprt(st: Standings) -> str:
    """The SPRT's verdict, its LLR and bounds, and the pentanomial counts it was computed on."""
    s = st.sprt
    if s is None or not st.pairings:
        return ""
    p = st.pairings[0]
    verdict = {
        SprtState.H1: f"H1 accepted: {p.first} is stronger than {p.second}",
        SprtState.H0: f"H0 accepted: {p.first} is not stronger than {p.second}",
        SprtState.CONTINUE: "no decision yet",
    }[s.state]
    counts = " ".join(str(c) for c in p.pentanomial)
    return (
        f'<p id="sprt" data-state="{_e(s.state.value)}"><b>SPRT: {_e(verdict)}</b> · LLR {s.llr:.2f} '
        f"(bounds {s.lower:.2f}, {s.upper:.2f}) after {plural(s.pairs, 'pair')} · pentanomial [{_e(counts)}] "
        f"(pairs scoring 0, ½, 1, 1½, 2 for {_e(p.first)}) · +{p.wins} ={p.draws} -{p.losses}</p>"
    )


def _fallback(rec: Record, nav: str, reason: str) -> str:
    """A match page without the board: the result and why the replay cannot be drawn."""
    a, b = rec.spec.seats
    res = rec.result
    forfeit = None
    if res.forfeit is not None:
        forfeit = f"{rec.spec.seats[res.forfeit.seat]} forfeits: {res.forfeit.reason.value}: {res.forfeit.detail[:300]}"
    title = f"{a} vs {b} — {rec.spec.match_id}"
    return no_board_html(title, describe(rec), res.scores, res.rounds, forfeit, reason, nav)


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
        mid = rec.spec.match_id
        for bot in dict.fromkeys(rec.spec.seats):  # the stderr logs of this match, where the run wrote them
            log = Output(root).log(mid, bot)
            if _non_empty(log):
                links.append((f"../{log.relative_to(root).as_posix()}", f"{bot}'s stderr log"))
        nav = nav_links(links)
        replay, page = existing_replay(root, mid) or replay_file(root, mid), root / match_page(mid)
        try:
            facts = write_html(replay, page, names=(rec.spec.seats[0], rec.spec.seats[1]), nav=nav)
            drawn += facts["board"]
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
    sprt = store.options.sprt
    stop = sprt_stop_point(store.config, records, sprt) if sprt is not None else None
    complete = stop is not None or not store.pending()
    facts = facts_text(st, len(store.schedule), complete, store.options.shard, stop)
    try:
        return write_home(root, st, records, facts)
    except OSError as exc:
        raise ViewerError(f"{root / HOME}: cannot write: {exc}") from None
