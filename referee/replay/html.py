"""Replays as pictures: one self-contained HTML page per match, and an index page for a folder of replays.

:func:`referee.replay.pictures.build_steps` replays the file with the engine and makes one picture per position
with the observer; :func:`render_html` embeds them as escaped JSON in a page whose small script only draws one
picture at a time. A page for one seat (``seat``) holds only what that seat saw: nothing hidden from it is in the
file, hidden or not. Pages load nothing from the network. Replay files are untrusted input: anything malformed
becomes a :class:`ViewerError` with a one-line message.
"""

from __future__ import annotations

import functools
import html
import json
import re
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import quote

from referee.replay.pictures import NoBoard, ViewerError, build_steps, result_text
from referee.replay.reader import first_line
from referee.replay.writer import FORMAT, plain_name
from referee.text import plural, scores_text

__all__ = [
    "NoBoard", "ViewerError", "asset", "build_steps", "embed_json", "fill", "find_replays", "nav_links",
    "no_board_html", "render_html", "result_text", "write_html", "write_index",
]  # fmt: skip

REPLAY_FORMAT = FORMAT
"""The format a file's first line must name to be listed by :func:`find_replays`."""


_JSON_ESCAPES = (
    ("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029"),
)  # fmt: skip


def embed_json(data: Any) -> str:
    """JSON safe inside a ``<script>`` element: no ``<``, ``>``, ``&`` or line separator appears raw."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    for raw, esc in _JSON_ESCAPES:
        text = text.replace(raw, esc)
    return text


@functools.cache
def asset(name: str) -> str:
    """The text of the viewer asset ``name`` (shipped in the package; read once a process)."""
    return resources.files("referee").joinpath("replay", "assets", name).read_text(encoding="utf-8")


def fill(template: str, values: dict[str, str]) -> str:
    """Replace ``@@NAME@@`` markers in one pass, so a value is never searched for further markers."""
    return re.sub(r"@@([A-Z]+)@@", lambda m: values[m.group(1)], template)


def nav_links(links: list[tuple[str, str]]) -> str:
    """Links (target, text) as the HTML of a page's navigation line; targets and texts are escaped."""
    return " · ".join(f'<a href="{html.escape(quote(href))}">{html.escape(text)}</a>' for href, text in links)


def render_html(data: dict[str, Any], *, seat: int | None = None, nav: str = "") -> str:
    """The viewer page of :func:`build_steps` data; ``seat`` (1 or 2) opens it from that seat's side (a page
    built for one seat is only ever shown from that side); ``nav`` is the HTML of a navigation line (see
    :func:`nav_links`) shown above the title."""
    match = data["match"]
    title = f"{match['names'][0]} vs {match['names'][1]} — {match['id']}"
    return fill(asset("page.html"), {
        "TITLE": html.escape(title),
        "CSS": asset("viewer.css"),
        "JS": asset("viewer.js"),
        "DATA": embed_json(data),
        "SEAT": "all" if seat is None else str(seat),
        "NAV": nav,
    })  # fmt: skip


def no_board_html(
    title: str, summary: str, scores: Sequence[int], rounds: int, forfeit: str | None, reason: str, nav: str = ""
) -> str:
    """A match page without the board: ``summary`` (``a vs b: a wins 0-0 (b forfeits: crash)``), the scores
    and rounds, ``forfeit`` (who forfeited and why, None: nobody) and ``reason``, why there is no board; ``nav``
    as for :func:`render_html`. Every text is escaped."""
    e = html.escape
    lines = [f"<p>{e(summary)}</p>", f"<p>Scores {e(scores_text(scores))}, {e(plural(rounds, 'round'))}.</p>"]
    if forfeit is not None:
        lines.append(f'<p id="forfeit">{e(forfeit)}</p>')
    lines.append(f'<p class="note">No board to show: {e(reason)}</p>')
    body = f'<nav id="links">{nav}</nav>\n' + "\n".join(lines)
    return fill(asset("home.html"), {"TITLE": e(title), "CSS": asset("viewer.css"), "BODY": body, "HEAD": ""})


def _no_board_page(nb: NoBoard, seat: int | None, nav: str) -> str:
    """The page of a replay that ended before the first deal: its result, as the tournament shows it."""
    match, r = nb.match, nb.result
    a, b = match["names"]
    summary = f"{a} vs {b}: " + (f"{match['names'][r.winner]} wins" if r.winner is not None else "draw")
    summary += f" {scores_text(r.scores)}"
    forfeit = None
    if r.forfeit is not None:
        who = match["names"][r.forfeit.seat]
        summary += f" ({who} forfeits: {r.forfeit.reason.value})"
        # as on a board page, the detail (it may name cards) is only in the full picture
        detail = f": {r.forfeit.detail[:300]}" if seat is None else ""
        forfeit = f"{who} forfeits: {r.forfeit.reason.value}{detail}"
    reason = "the match ended before the first deal"
    return no_board_html(f"{a} vs {b} — {match['id']}", summary, r.scores, r.rounds, forfeit, reason, nav)


def write_html(
    replay: Path,
    out: Path,
    *,
    seat: int | None = None,
    key: bytes | None = None,
    names: tuple[str, str] | None = None,
    nav: str = "",
) -> dict[str, Any]:
    """Write the viewer page of the replay file ``replay`` to ``out`` (as ``seat`` saw it, or in full); returns
    the match facts. With ``key``, the replay's signature chain is checked too; ``names`` and ``nav`` are
    those of :func:`build_steps` and :func:`render_html`. A match that ended before the first deal (a
    forfeit at ``hello``) gets a page with its result and no board (its facts say ``"board": False``)."""
    try:
        data = build_steps(replay, seat, key, names)
        page, facts = render_html(data, seat=seat, nav=nav), {**data["match"], "board": True}
    except NoBoard as nb:
        page, facts = _no_board_page(nb, seat, nav), {**nb.match, "board": False}
    try:
        out.write_text(page, encoding="utf-8")
    except OSError as exc:
        raise ViewerError(f"{out}: cannot write: {exc}") from None
    return facts


def find_replays(folder: Path) -> list[Path]:
    """The replay files under ``folder`` (``*.jsonl`` or ``*.jsonl.gz`` whose first line is a replay header),
    sorted by path."""
    found: list[Path] = []
    for path in sorted([*folder.rglob("*.jsonl"), *folder.rglob("*.jsonl.gz")]):
        first = first_line(path)
        if b'"header"' in first and REPLAY_FORMAT.encode() in first:
            found.append(path)
    return found


def _row(cells: list[str], attrs: str) -> str:
    """A table row: ``cells[0]`` is the link target of ``cells[1]`` (none when empty); all text is escaped."""
    href, first, *rest = cells
    link = f'<a href="{html.escape(href)}">{html.escape(first)}</a>' if href else html.escape(first)
    return f"<tr {attrs}><td>{link}</td>" + "".join(f"<td>{html.escape(c)}</td>" for c in rest) + "</tr>"


def write_index(folder: Path) -> Path:
    """Write a page per replay under ``folder`` (next to it, as ``.html``) and ``folder/index.html``
    linking them.

    A replay that cannot be shown is listed with its error instead of a link. (A tournament's folder has pages
    of its own: :func:`referee.tournament.pages.write_site`.)
    """
    if not folder.is_dir():
        raise ViewerError(f"{folder}: not a folder")
    rows: list[str] = []
    for replay in find_replays(folder):
        rel = replay.relative_to(folder).as_posix()
        page = plain_name(replay).with_suffix(".html")
        try:
            m = write_html(replay, page)
        except ViewerError as exc:
            rows.append(_row(["", rel, "", "", f"cannot show: {exc}", "", ""], 'class="bad"'))
            continue
        res = m["result"]
        scores = "–".join(str(s) for s in res["scores"]) if res else ""
        href = quote(page.relative_to(folder).as_posix())
        cells = [href, m["id"] or rel, m["names"][0], m["names"][1], result_text(m), scores, m["rules"]]
        rows.append(_row(cells, f'data-match="{html.escape(m["id"])}"'))
    body = "\n".join(rows) or '<tr><td colspan="6">No replays found.</td></tr>'
    index = folder / "index.html"
    page_html = fill(asset("index.html"), {"TITLE": html.escape(f"Replays in {folder.name}"), "ROWS": body,
                                              "CSS": asset("viewer.css")})  # fmt: skip
    try:
        index.write_text(page_html, encoding="utf-8")
    except OSError as exc:
        raise ViewerError(f"{index}: cannot write: {exc}") from None
    return index
