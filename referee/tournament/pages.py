"""The tournament's pages: ``index.html``, its home page, and a viewer page per match.

The home page holds the leaderboard (rank, name, games, W/D/L, score rate and Elo with their 95% intervals,
likelihood of superiority over the next bot), the crosstable (every pairing's score rate, linked to its
matches), the per-bot statistics (decision times, time bank, memory, forfeits, links to the stderr logs), a
picture (inline SVG) of how the ratings settled as the results came in, and the last matches to finish (every
match is in ``matches.csv``, linked). It is written from the standings and a
:class:`~referee.tournament.digest.Digest`, both bounded however many matches were played. Match pages are
:mod:`referee.tournament.match_page`'s, written as the matches are recorded; :class:`Site` writes those a
folder lacks (a look at each match's page, its record read only when the page is missing) and leaves the others
alone, and takes the digest from what the store gathered as the results passed
(:class:`~referee.tournament.collected.Collected`). Pages follow
:mod:`referee.replay.html`: self-contained, escaped, nothing loaded from the network.
"""

from __future__ import annotations

import html
import os
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote

from referee.replay.html import ViewerError, asset, fill
from referee.text import plural
from referee.tournament.bot_pages import bot_page, write_bot_pages
from referee.tournament.collected import Collected
from referee.tournament.columns import LEADERBOARD_HEAD, STATS_HEAD, leaderboard_cells, stats_cells
from referee.tournament.commitment import commit
from referee.tournament.config import TournamentError
from referee.tournament.digest import Digest
from referee.tournament.folder import DESCRIPTION, existing_replay, write_atomic
from referee.tournament.match_page import match_page, write_match_page
from referee.tournament.progress import describe
from referee.tournament.records import Record
from referee.tournament.standings import Standings
from referee.tournament.stats import SprtState
from referee.tournament.store import Store

HOME = "index.html"
"""The home page's file name in the tournament folder."""

COLOURS = ("#ffe27a", "#4dd0e1", "#f48fb1", "#aed581", "#ffb74d", "#b39ddb", "#e57373", "#90caf9", "#fff176",
           "#80cbc4")  # fmt: skip
"""The line colour of each bot in the ratings picture (repeated past ten bots)."""

MATCHES_CSV = "matches.csv"
"""Every recorded match, one a line (:func:`~referee.tournament.report.write_report`'s)."""

MAX_LOGS = 5
"""Stderr logs linked per bot on the home page (those of its forfeits first)."""


def _e(text: object) -> str:
    return html.escape(str(text))


def _table(table_id: str, head: Sequence[str], rows: Sequence[str]) -> str:
    ths = "".join(f"<th>{_e(h)}</th>" for h in head)
    return f'<table id="{table_id}"><thead><tr>{ths}</tr></thead><tbody>\n' + "\n".join(rows) + "\n</tbody></table>"


def _match_href(root: Path, match_id: str) -> str:
    page = match_page(match_id)
    if (root / page).exists():
        return quote(page)
    replay = existing_replay(root, match_id)
    return quote(page if replay is None else replay.relative_to(root).as_posix())


def leaderboard_html(st: Standings) -> str:
    """The leaderboard table of the home page (``tournament verify`` looks for it there)."""
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


def _stats(st: Standings, digest: Digest) -> str:
    rows = []
    for b in st.bots:
        cells = "".join(f"<td>{_e(c)}</td>" for c in stats_cells(b))
        logs = digest.logs(b.name, MAX_LOGS)
        links = " ".join(f'<a href="{_e(quote(p))}">{_e(Path(p).name)}</a>' for p in logs) or "-"
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
    last = history[-1][1]
    for name in sorted((n for n in names if n in last), key=lambda n: -last[n]):  # top-down, 13 px apart at least
        below = label_y[name] = max(y(last[name]) + 4, below + 13)
    for k, name in enumerate(names):
        if name not in last:
            continue
        colour = COLOURS[k % len(COLOURS)]  # a bot a ladder step added is drawn from the step on
        pts = " ".join(f"{x(n):.1f},{y(elos[name]):.1f}" for n, elos in history if name in elos)
        parts.append(f'<polyline data-bot="{_e(name)}" fill="none" stroke="{colour}" stroke-width="2" points="{pts}"/>')
        parts.append(
            f'<text x="{w - right + 6}" y="{label_y[name]:.1f}" fill="{colour}" font-size="12">'
            f"{_e(name)} {history[-1][1][name]:+.0f}</text>"
        )
    parts.append("</svg>")
    return "\n".join(parts)


def _matches(root: Path, st: Standings, digest: Digest) -> str:
    """The last matches to finish, pairing by pairing (each in schedule order), under a heading row per pairing
    that has games (the crosstable's links lead there)."""
    keys = [f"{p.first}-vs-{p.second}" for p in st.pairings]
    by_pairing: dict[int, list[Record]] = {k: [] for k, p in enumerate(st.pairings) if p.games}
    last = digest.last_matches()
    for rec in sorted(last, key=lambda r: r.spec.index):
        by_pairing.setdefault(rec.spec.pairing, []).append(rec)
    rows = []
    for k, recs in sorted(by_pairing.items()):
        key = keys[k]
        rows.append(
            f'<tr class="pairing" id="pairing-{_e(key)}"><th colspan="4">{_e(key.replace("-vs-", " vs "))}</th></tr>'
        )
        for rec in recs:
            mid = rec.spec.match_id
            link = f'<a href="{_e(_match_href(root, mid))}">{_e(mid)}</a>'
            if digest.waiting(rec):  # its replay shows the deal its twin is playing
                link = f'{_e(mid)} <span class="waiting">(its twin is still to be played)</span>'
            rows.append(
                f'<tr data-match="{_e(mid)}"><td>{link}</td><td>{_e(rec.spec.seats[0])}</td>'
                f"<td>{_e(rec.spec.seats[1])}</td><td>{_e(describe(rec))}</td></tr>"
            )
    shown = len(last)
    which = "every match" if shown == digest.count else f"the last {shown} of {digest.count} matches to finish"
    note = (f'<p id="all-matches">Below: {_e(which)}. Every match is in '
            f'<a href="{MATCHES_CSV}">{MATCHES_CSV}</a>.</p>')  # fmt: skip
    return note + _table("matches", ["match", "seat 1", "seat 2", "result"], rows)


def home_html(root: Path, st: Standings, digest: Digest, title: str, facts: str, refresh: int = 0) -> str:
    """The home page of a tournament folder, from its standings and the :class:`Digest` of its records (in the
    order they finished); ``refresh``: reload itself every so many seconds (a running tournament's page; 0:
    never). Writes the bot pages it links to as well."""
    history = digest.history if st.config is not None else []
    write_bot_pages(root, st, digest, history, title)
    body = "\n".join([
        _event(st),
        f'<p id="facts">{_e(facts)}</p>',
        _sprt(st),
        "<h2>Leaderboard</h2>", leaderboard_html(st),
        '<p class="note">Elo: a joint Bradley–Terry fit over all games (a draw is half a win), mean 0, with a 95% '
        "interval; LOS: the likelihood that the bot is stronger than the next one.</p>",
        _asymmetry(st),
        "<h2>Crosstable</h2>", _crosstable(st),
        "<h2>Per-bot statistics</h2>", _stats(st, digest),
        "<h2>How the ratings settled</h2>", _history_svg(st, history),
        "<h2>Matches</h2>", _matches(root, st, digest),
    ])  # fmt: skip
    head = f'<meta http-equiv="refresh" content="{refresh:d}">' if refresh > 0 else ""
    return fill(asset("home.html"), {"TITLE": _e(title), "CSS": asset("viewer.css"), "BODY": body, "HEAD": head})


def write_home(root: Path, st: Standings, digest: Digest, facts: str, refresh: int = 0) -> Path:
    """Write ``index.html`` of the tournament folder ``root`` and its bot pages (``digest`` and ``refresh`` as
    :func:`home_html`'s)."""
    path = root / HOME
    event = st.config.event if st.config is not None else None
    write_atomic(path, home_html(root, st, digest, event or f"Tournament {root.resolve().name}", facts, refresh))
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


def is_tournament(folder: Path) -> bool:
    """Whether ``folder`` is a tournament's output folder (it holds the tournament's description)."""
    return (folder / DESCRIPTION).is_file()


class Site:
    """The pages of the tournament folder of ``store``, from what ``collected`` gathered over its records (the
    :class:`Digest`, when the SPRT stopped): :meth:`write` writes the page of each match that has none, then the
    home page and the bot pages from the standings."""

    def __init__(self, store: Store, collected: Collected) -> None:
        self.store = store
        self.root = store.root
        self.collected = collected
        self.digest = collected.digest

    @property
    def stop_point(self) -> int | None:
        """After how many pairs the SPRT stopped (None: no SPRT, or it did not decide)."""
        stop = self.collected.stop
        return None if stop is None else stop.point

    def write_missing(self) -> None:
        """The page of each match of a complete pair that has none (a look at each match's page, its record read
        only when the page is missing): the page of a game whose twin is still to be played would show the deal
        it plays. :class:`ViewerError` when one cannot be written."""
        ledger = self.store.schedule
        links = ledger.links()
        with self.store.reader() as read:
            for _, pairing, pair in ledger.pair_keys():
                if ledger.slot_offset(pairing, pair, 0) < 0 or ledger.slot_offset(pairing, pair, 1) < 0:
                    continue
                for game in range(2):
                    offset = ledger.slot_offset(pairing, pair, game)
                    page = os.path.join(self.root, match_page(ledger.match_id(pairing, pair, game)))
                    if os.path.exists(page):
                        continue
                    rec = read(offset)
                    write_match_page(self.root, rec, *links.links(rec.spec))

    def write(self, st: Standings) -> Path:
        """The missing match pages, the home page and the bot pages from ``st`` (the standings of the records
        collected); returns the home page. :class:`ViewerError` when a page could not be written."""
        self.write_missing()
        stop = self.stop_point
        store = self.store
        complete = stop is not None or not any(True for _ in store.schedule.pending())
        facts = facts_text(st, len(store.schedule), complete, store.options.shard, stop)
        with store.reader() as read:
            digest = self.digest.resolved(read)
        try:
            return write_home(self.root, st, digest, facts)
        except OSError as exc:
            raise ViewerError(f"{self.root / HOME}: cannot write: {exc}") from None


def write_site(root: Path) -> Path:
    """The pages of the tournament folder ``root``: a page for each match that has none, then the home page and
    the bot pages; returns the home page. :class:`ViewerError` for a folder that cannot be read or written.
    (The end of a run writes them from its report's own pass: :func:`referee.tournament.session.summarize`.)"""
    try:
        store = Store.open_readonly(root, collect=True)
    except TournamentError as exc:
        raise ViewerError(str(exc)) from None
    collected = store.collection()
    return Site(store, collected).write(collected.tally.standings(store.options.sprt))
