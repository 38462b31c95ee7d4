"""A page per bot of a tournament folder (``bots/NAME.html``), linked from the home page's leaderboard.

Each shows the bot's line of the leaderboard, its rating as the results came in, the distribution of its
decision times, its memory, its last games (opponent, seat, result, forfeit reason and detail, its decisions,
longest decision and peak memory in that game; every game is in ``matches.csv``) and the stderr logs of the last
matches it forfeited, from a :class:`~referee.tournament.digest.Digest`. Logs are found where
:meth:`~referee.tournament.folder.Output.log` puts them. Self-contained like every page here.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote

from referee.records import bucket_upper_ms
from referee.replay.html import asset, fill, nav_links
from referee.text import scores_text
from referee.tournament.columns import LEADERBOARD_HEAD, leaderboard_cells
from referee.tournament.digest import Digest
from referee.tournament.folder import Output, existing_replay, write_atomic
from referee.tournament.standings import Standings

FOLDER = "bots"
"""The folder of the bot pages in the tournament folder."""

DETAIL_CHARS = 200
"""How much of a forfeit's detail a games table shows."""


def _e(text: object) -> str:
    return html.escape(str(text))


def bot_page(name: str) -> str:
    """The page of bot ``name``, from the tournament folder."""
    return f"{FOLDER}/{name}.html"


def _log_href(root: Path, match_id: str, bot: str) -> str | None:
    """The link (from a page one folder down) to ``bot``'s non-empty stderr log of ``match_id``, if any."""
    path = Output(root).log(match_id, bot)
    try:
        if path.stat().st_size == 0:
            return None
    except OSError:
        return None
    return "../" + quote(path.relative_to(root).as_posix())


def _match_href(root: Path, match_id: str) -> str:
    """The link (from a page one folder down) to a match's page, or to its replay while it has no page yet."""
    page = root / "replays" / f"{match_id}.html"
    replay = existing_replay(root, match_id)
    target = page if page.exists() or replay is None else replay
    return "../" + quote(target.relative_to(root).as_posix())


def _rating_svg(name: str, history: Sequence[tuple[int, dict[str, float]]]) -> str:
    """The bot's Elo at each checkpoint of the results, as an inline SVG line."""
    history = [(n, elos) for n, elos in history if name in elos]  # a bot a ladder step added: from the step on
    if not history:
        return '<p id="bot-history">No results yet.</p>'
    w, h, left, right, top, bottom = 640, 200, 52, 16, 12, 30
    xmax = max(history[-1][0], 1)
    ys = [elos[name] for _, elos in history]
    lo, hi = min([*ys, -50.0]), max([*ys, 50.0])

    def x(n: float) -> float:
        return left + (w - left - right) * n / xmax

    def y(e: float) -> float:
        return top + (h - top - bottom) * (hi - e) / (hi - lo)

    pts = " ".join(f"{x(n):.1f},{y(elos[name]):.1f}" for n, elos in history)
    return "\n".join([
        f'<svg id="bot-history" xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
        f'role="img" aria-label="rating of {_e(name)} as the results came in">',
        f'<rect x="{left}" y="{top}" width="{w - left - right}" height="{h - top - bottom}" fill="#24462f"/>',
        f'<line x1="{left}" x2="{w - right}" y1="{y(0):.1f}" y2="{y(0):.1f}" stroke="#8fb39b" stroke-dasharray="4 3"/>',
        f'<text x="{left - 6}" y="{y(hi) + 10:.1f}" text-anchor="end" fill="#cfe3d4" font-size="11">{hi:+.0f}</text>',
        f'<text x="{left - 6}" y="{y(lo):.1f}" text-anchor="end" fill="#cfe3d4" font-size="11">{lo:+.0f}</text>',
        f'<text x="{(left + w - right) / 2:.0f}" y="{h - 8}" text-anchor="middle" fill="#cfe3d4" font-size="11">'
        f"matches played (0 to {xmax}); Elo, mean 0; now {ys[-1]:+.0f}</text>",
        f'<polyline fill="none" stroke="#ffe27a" stroke-width="2" points="{pts}"/>',
        "</svg>",
    ])  # fmt: skip


def _times_svg(histogram: dict[int, int]) -> str:
    """The decision times as bars, one per time bucket used (log scale), labelled with the bucket's upper edge."""
    if not histogram:
        return '<p id="times">No decisions measured.</p>'
    keys = list(range(min(histogram), max(histogram) + 1))
    w, h, left, bottom, top = 640, 180, 40, 34, 12
    bar = (w - left - 8) / len(keys)
    most = max(histogram.values())
    parts = [
        f'<svg id="times" xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
        'role="img" aria-label="decision times">',
        f'<text x="{left - 6}" y="{top + 10}" text-anchor="end" fill="#cfe3d4" font-size="11">{most}</text>',
    ]
    step = max(1, len(keys) // 8)  # at most about eight labels
    for i, k in enumerate(keys):
        n = histogram.get(k, 0)
        bh = (h - top - bottom) * n / most
        x = left + i * bar
        parts.append(f'<rect data-bucket="{k}" data-count="{n}" x="{x:.1f}" y="{h - bottom - bh:.1f}" '
                     f'width="{max(bar - 1, 1):.1f}" height="{bh:.1f}" fill="#4dd0e1"/>')  # fmt: skip
        if i % step == 0:
            label = f"{bucket_upper_ms(k):.3g}"
            parts.append(f'<text x="{x + bar / 2:.1f}" y="{h - bottom + 14}" text-anchor="middle" fill="#cfe3d4" '
                         f'font-size="10">{label}</text>')  # fmt: skip
    parts.append(f'<text x="{(left + w) / 2:.0f}" y="{h - 6}" text-anchor="middle" fill="#cfe3d4" font-size="11">'
                 "decision time, ms (upper edge of each bucket; log scale)</text>")  # fmt: skip
    parts.append("</svg>")
    return "\n".join(parts)


def _failed(digest: Digest, name: str) -> list[str]:
    """The links to the bot's logs of the last matches it forfeited, in schedule order."""
    failed = sorted((e for e in digest.failed_of(name) if not digest.waiting(e[0])), key=lambda e: e[0].spec.index)
    return [f'<li><a href="{_e("../" + quote(log))}">{_e(rec.spec.match_id)}</a>: '
            f"{_e(rec.offender[1].value if rec.offender else '')}</li>" for rec, log in failed]  # fmt: skip


def _games(root: Path, name: str, digest: Digest) -> str:
    """The table of the bot's last games, in schedule order."""
    rows = []
    for rec in sorted(digest.games_of(name), key=lambda r: r.spec.index):
        seats = rec.spec.seats
        seat = seats.index(name)
        mid, res = rec.spec.match_id, rec.result
        other = seats[1 - seat]
        points = rec.points_of(name)
        outcome = "win" if points == 1 else "draw" if points == 0.5 else "loss"
        why = ""
        waiting = digest.waiting(rec)  # its replay, logs and forfeit detail show the deal its twin is playing
        if res.forfeit is not None:
            by = seats[res.forfeit.seat]
            detail = "" if waiting else f": {res.forfeit.detail[:DETAIL_CHARS]}"
            why = f"{by} forfeits: {res.forfeit.reason.value}{detail}"
        stats = res.seat_stats[seat] if res.seat_stats else None
        log = None if waiting else _log_href(root, mid, name)
        log_cell = f'<a href="{_e(log)}">log</a>' if log else "-"
        link = f'<a href="{_e(_match_href(root, mid))}">{_e(mid)}</a>'
        if waiting:
            link = f'{_e(mid)} <span class="waiting">(its twin is still to be played)</span>'
        cells = [
            link, _e(other), str(seat + 1), outcome,
            _e(scores_text(list(res.scores))), _e(why) or "-",
            "-" if stats is None else str(stats.decisions), "-" if stats is None else f"{stats.max_ms:.1f}",
            "-" if stats is None or not stats.peak_memory else f"{stats.peak_memory / (1 << 20):.1f}", log_cell,
        ]  # fmt: skip
        rows.append(f'<tr data-match="{_e(mid)}" data-outcome="{outcome}">' + "".join(
            f'<td class="detail">{c}</td>' if k == 5 else f"<td>{c}</td>" for k, c in enumerate(cells)
        ) + "</tr>")  # fmt: skip
    head = ["match", "against", "seat", "result", "scores", "forfeit", "decisions", "max ms", "peak MiB", "stderr"]
    ths = "".join(f"<th>{_e(t)}</th>" for t in head)
    return f'<table id="games"><thead><tr>{ths}</tr></thead><tbody>\n' + "\n".join(rows) + "\n</tbody></table>"


def bot_html(root: Path, st: Standings, k: int, digest: Digest,
             history: Sequence[tuple[int, dict[str, float]]], title: str) -> str:  # fmt: skip
    """The page of ``st.bots[k]``, its games and logs from ``digest``."""
    b = st.bots[k]
    cells = "".join(f"<td>{_e(c)}</td>" for c in leaderboard_cells(st.rank_text(k), b))
    ths = "".join(f"<th>{_e(h)}</th>" for h in LEADERBOARD_HEAD)
    s = b.stats
    mean, p95 = s.mean_ms, s.p95_ms
    times = ("-" if mean is None else f"mean {mean:.1f} ms") + ("" if p95 is None else f", p95 {p95:.1f} ms") + (
        f", longest {s.max_ms:.1f} ms" if s.decisions else "")  # fmt: skip
    memory = f"{s.peak_memory / (1 << 20):.1f} MiB" if s.peak_memory else "not measured"
    games, failed = _games(root, b.name, digest), _failed(digest, b.name)
    shown = len(digest.games_of(b.name))
    which = "every game" if shown == digest.played.get(b.name, 0) else f"its last {shown} games"
    body = "\n".join([
        f'<nav id="links">{nav_links([("../index.html", "tournament home")])}</nav>',
        f'<table id="bot-line"><thead><tr>{ths}</tr></thead><tbody><tr>{cells}</tr></tbody></table>',
        "<h2>Rating as the results came in</h2>", _rating_svg(b.name, history),
        f"<h2>Decision times</h2><p>{s.decisions} decisions: {_e(times)}</p>", _times_svg(s.histogram),
        f'<h2>Memory</h2><p id="memory">peak {_e(memory)} (the most its processes held in any match)</p>',
        "<h2>Logs of the matches it forfeited</h2>",
        f'<ul id="failed-logs">{"".join(failed)}</ul>' if failed else '<p id="failed-logs">None.</p>',
        f'<h2>Games</h2><p id="all-games">Below: {_e(which)}. Every match is in '
        '<a href="../matches.csv">matches.csv</a>.</p>', games,
    ])  # fmt: skip
    return fill(asset("home.html"), {"TITLE": _e(f"{b.name} — {title}"), "CSS": asset("viewer.css"), "BODY": body,
                                     "HEAD": ""})  # fmt: skip


def write_bot_pages(root: Path, st: Standings, digest: Digest,
                    history: Sequence[tuple[int, dict[str, float]]], title: str) -> int:  # fmt: skip
    """Write ``bots/NAME.html`` for every bot of ``st``; returns how many."""
    (root / FOLDER).mkdir(exist_ok=True)
    for k, b in enumerate(st.bots):
        write_atomic(root / bot_page(b.name), bot_html(root, st, k, digest, history, title))
    return len(st.bots)
