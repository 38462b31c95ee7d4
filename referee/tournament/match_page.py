"""One match's viewer page in a tournament folder (``replays/ID.html``), written when the match is recorded.

The worker that played a match writes its page right after the replay is closed (or ``replay html`` writes the
pages a folder lacks), so a finished run has nothing left to draw. A page shows the tournament's names for its
bots and links to the home page, to the previous and next match of the folder's schedule
(:class:`~referee.tournament.ledger.Links`) and to the stderr logs of that match. A match whose replay
cannot be drawn (a bot that never said ``hello``) gets a page with its result and the reason. Pages follow
:mod:`referee.replay.html`: self-contained, escaped.
"""

from __future__ import annotations

from pathlib import Path

from referee.replay.html import ViewerError, nav_links, no_board_html, write_html
from referee.tournament.folder import Output, existing_replay, replay_file
from referee.tournament.progress import describe
from referee.tournament.records import Record


def match_page(match_id: str) -> str:
    """A match page's path from the tournament folder."""
    return f"replays/{match_id}.html"


def _has_log(path: Path) -> bool:
    try:
        return path.stat().st_size > 0
    except OSError:
        return False


def _fallback(rec: Record, nav: str, reason: str) -> str:
    """A match page without the board: the result and why the replay cannot be drawn."""
    a, b = rec.spec.seats
    res = rec.result
    forfeit = None
    if res.forfeit is not None:
        forfeit = f"{rec.spec.seats[res.forfeit.seat]} forfeits: {res.forfeit.reason.value}: {res.forfeit.detail[:300]}"
    title = f"{a} vs {b} — {rec.spec.match_id}"
    return no_board_html(title, describe(rec), res.scores, res.rounds, forfeit, reason, nav)


def write_match_page(root: Path, rec: Record, before: str | None, after: str | None) -> bool:
    """Write the page of ``rec`` in the tournament folder ``root`` (its replay and logs there), linking the
    matches ``before`` and ``after`` it; returns whether it shows a board. :class:`ViewerError` when the page
    cannot be written."""
    mid = rec.spec.match_id
    links = [("../index.html", "tournament home")]
    if before is not None:
        links.append((f"{before}.html", f"« previous: {before}"))
    if after is not None:
        links.append((f"{after}.html", f"next: {after} »"))
    for bot in dict.fromkeys(rec.spec.seats):  # the stderr logs of this match, where the run wrote them
        log = Output(root).log(mid, bot)
        if _has_log(log):
            links.append((f"../{log.relative_to(root).as_posix()}", f"{bot}'s stderr log"))
    nav = nav_links(links)
    replay, page = existing_replay(root, mid) or replay_file(root, mid), root / match_page(mid)
    try:
        return bool(write_html(replay, page, names=(rec.spec.seats[0], rec.spec.seats[1]), nav=nav)["board"])
    except ViewerError as exc:
        try:
            page.write_text(_fallback(rec, nav, str(exc)), encoding="utf-8")
        except OSError as err:
            raise ViewerError(f"{page}: cannot write: {err}") from None
        return False
