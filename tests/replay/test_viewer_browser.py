"""The replay viewer in headless Chromium: stepping with keys and buttons, the seat selector, a screenshot."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from referee.replay.html import write_html
from tests.replay_factory import engine_states, expected_view, write_replay

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="no headless Chromium at /usr/bin/chromium (apt-get install chromium)"
    ),
]

if CHROMIUM.exists():
    from playwright.sync_api import Browser, Dialog, Page, sync_playwright

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]  # fmt: skip

# Reads back what the page shows, from the data attributes it puts on its elements.
READ = """() => {
  const ids = (sel) => Array.from(document.querySelectorAll(sel)).map((e) => e.dataset.card);
  const seat = (n) => {
    const box = document.querySelector(`section.seat[data-seat="${n}"]`);
    return {
      score: Number(box.dataset.score), handSize: Number(box.dataset.handSize),
      calls: Number(box.dataset.calls),
      hand: ids(`section.seat[data-seat="${n}"] .hand [data-card]`),
      backs: box.querySelectorAll(".hand [data-hidden]").length,
      captured: ids(`section.seat[data-seat="${n}"] .pile [data-card]`),
      total: Number(box.querySelector(".yaku").dataset.total),
    };
  };
  return {
    step: Number(document.body.dataset.step), steps: Number(document.body.dataset.steps),
    round: Number(document.body.dataset.round), view: document.body.dataset.seatView,
    field: ids("#field [data-card]"), drawn: ids("#drawn [data-card]"),
    stock: Number(document.querySelector("#stock").dataset.count), stockFaces: ids("#stock [data-card]"),
    move: document.querySelector("#move").textContent, seats: [seat(1), seat(2)],
    title: document.querySelector("#title").textContent, facts: document.querySelector("#facts").textContent,
    seatLocked: document.querySelector("#seat").disabled,
  };
}"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield b
        b.close()


def _open(browser: Browser, page_path: Path) -> tuple[Page, list[str], list[str]]:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    requests: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)

    def dialog(d: Dialog) -> None:
        errors.append(f"dialog: {d.message}")
        d.dismiss()

    page.on("dialog", dialog)
    page.on("request", lambda r: requests.append(r.url))
    page.goto(page_path.as_uri())
    return page, errors, requests


def _check(shown: dict[str, Any], want: dict[str, Any], hidden: int | None = None) -> None:
    """The page shows ``want`` (an :func:`expected_view`), with the hand of seat ``hidden`` (0/1) face down."""
    assert shown["field"] == want["field"]
    assert shown["drawn"] == ([] if want["drawn"] is None else [want["drawn"]])
    assert shown["stock"] == want["stock"]
    for s in (0, 1):
        seat = shown["seats"][s]
        if s == hidden or want["hands"][s] is None:
            assert seat["hand"] == [] and seat["backs"] == want["sizes"][s]
        else:
            assert seat["hand"] == want["hands"][s] and seat["backs"] == 0
        assert seat["handSize"] == want["sizes"][s]
        assert sorted(seat["captured"]) == sorted(want["captured"][s])
        assert seat["score"] == want["scores"][s]
        assert seat["calls"] == want["calls"][s]
        assert seat["total"] == want["totals"][s]


def test_stepping_through_a_match(browser: Browser, tmp_path: Path) -> None:
    replay = tmp_path / "m.replay.jsonl"
    lines = write_replay(replay, rules="koikoi-japan", seed=7)
    out = tmp_path / "m.html"
    write_html(replay, out)
    states = engine_states(lines)
    page, errors, requests = _open(browser, out)

    first = page.evaluate(READ)
    n_steps = first["steps"]
    assert first["step"] == 0 and n_steps == len(states)
    assert first["title"] == "alpha vs beta" and first["view"] == "all" and not first["seatLocked"]
    _check(first, expected_view(states[0]))

    for i in range(1, 13):  # alternate the arrow key and the Next button
        if i % 2:
            page.keyboard.press("ArrowRight")
        else:
            page.click("#next")
        shown = page.evaluate(READ)
        assert shown["step"] == i
        _check(shown, expected_view(states[i]))
    assert "plays" in shown["move"] or "calls" in shown["move"] or "stops" in shown["move"]

    page.keyboard.press("ArrowLeft")
    page.click("#prev")
    assert page.evaluate(READ)["step"] == 10
    page.keyboard.press("End")
    last = page.evaluate(READ)
    assert last["step"] == n_steps - 1 and "Match over" in last["move"]
    assert [s["score"] for s in last["seats"]] == lines[-1]["scores"]
    assert page.is_disabled("#next") and not page.is_disabled("#prev")
    page.keyboard.press("Home")
    assert page.evaluate(READ)["step"] == 0 and page.is_disabled("#prev")

    page.select_option("#round", "2")
    at_round = page.evaluate(READ)
    start = next(i for i, state in enumerate(states) if state.round == 2)
    assert at_round["round"] == 2 and at_round["step"] == start

    page.click("#next")
    want = expected_view(states[start + 1])
    page.select_option("#seat", "1")
    mine = page.evaluate(READ)
    assert mine["view"] == "1" and mine["stockFaces"] == [] and mine["stock"] > 0
    _check(mine, want, hidden=1)
    page.screenshot(path=str(tmp_path / "viewer-seat1.png"), full_page=True)
    page.select_option("#seat", "2")
    _check(page.evaluate(READ), want, hidden=0)
    page.select_option("#seat", "all")
    both = page.evaluate(READ)
    _check(both, want)
    assert len(both["stockFaces"]) == 1

    shot = tmp_path / "viewer.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000
    assert errors == []
    assert all(url.startswith("file://") for url in requests), requests
    page.close()


def test_a_seat_page_shows_that_seat_and_a_big_seed_exactly(browser: Browser, tmp_path: Path) -> None:
    seed = 2**53 + 1  # JavaScript's numbers would show 9007199254740992
    replay = tmp_path / "big.replay.jsonl"
    lines = write_replay(replay, rules="cardavia", seed=seed)
    states = engine_states(lines)
    write_html(replay, tmp_path / "all.html")
    page, errors, _ = _open(browser, tmp_path / "all.html")
    assert "seed 9007199254740993" in page.evaluate(READ)["facts"]
    page.close()
    write_html(replay, tmp_path / "two.html", seat=2)
    page, errors2, requests = _open(browser, tmp_path / "two.html")
    for i in range(min(8, len(states))):
        shown = page.evaluate(READ)
        assert shown["view"] == "2" and shown["seatLocked"] and shown["stockFaces"] == []
        assert "seed" not in shown["facts"]
        _check(shown, expected_view(states[i], 1))
        page.keyboard.press("ArrowRight")
    assert errors == errors2 == [] and all(url.startswith("file://") for url in requests)
    page.close()


def test_a_hostile_bot_name_stays_text(browser: Browser, tmp_path: Path) -> None:
    name = '</script><script>alert("x")</script><img src=x onerror=alert(2)>'
    replay = tmp_path / "evil.replay.jsonl"
    write_replay(replay, names=(name, "b"), seed=3)
    out = tmp_path / "evil.html"
    write_html(replay, out, seat=2)
    page, errors, requests = _open(browser, out)
    shown = page.evaluate(READ)
    assert shown["title"] == f"{name} vs b"
    assert shown["view"] == "2" and shown["seats"][0]["hand"] == [] and shown["seats"][0]["backs"] == 8
    assert page.locator("img").count() == 0 and page.locator("script").count() == 2
    assert errors == [] and all(url.startswith("file://") for url in requests)
    page.close()


ART = """() => {
  const shown = {};
  document.querySelectorAll("[data-card]").forEach((e) => {
    const svg = e.querySelector("svg.art");
    shown[e.dataset.card] = svg ? {shapes: svg.children.length, picture: svg.innerHTML,
                                   width: svg.getBoundingClientRect().width} : null;
  });
  const backs = Array.from(document.querySelectorAll("[data-hidden]")).map((e) => e.querySelectorAll("svg").length);
  return {shown, backs};
}"""


def test_cards_are_small_pictures_of_their_plant_and_subject(browser: Browser, tmp_path: Path) -> None:
    replay = tmp_path / "m.replay.jsonl"
    write_replay(replay, rules="koikoi-japan", seed=7)
    write_html(replay, tmp_path / "all.html")
    page, errors, requests = _open(browser, tmp_path / "all.html")
    seen: dict[str, dict[str, Any]] = {}
    for _ in range(40):  # along the match, until the capture piles hold cards of many months
        got = page.evaluate(ART)
        seen.update(got["shown"])
        page.keyboard.press("ArrowRight")
    assert len(seen) >= 30 and all(v is not None and v["shapes"] >= 2 for v in seen.values())
    pictures: dict[str, str] = {card: v["picture"] for card, v in seen.items()}
    by_month: dict[str, set[str]] = {}
    for card, picture in pictures.items():
        by_month.setdefault(card.split("-")[0], set()).add(picture)
    for card, picture in pictures.items():  # a month's two plain cards look alike; no other two cards do
        others = {c for c, p in pictures.items() if p == picture and c != card}
        assert all("chaff" in c and "chaff" in card and c.split("-")[0] == card.split("-")[0] for c in others), (
            card, others)
    assert len({p for p in pictures.values()}) >= len(by_month)  # every month has a plant of its own
    assert min(v["width"] for v in seen.values()) >= 30  # still a picture at the capture piles' size
    write_html(replay, tmp_path / "two.html", seat=2)
    page2, errors2, requests2 = _open(browser, tmp_path / "two.html")
    assert page2.evaluate(ART)["backs"] and set(page2.evaluate(ART)["backs"]) == {0}  # a hidden card: no picture
    page2.screenshot(path=str(tmp_path / "cards.png"))
    assert errors == errors2 == [] and all(u.startswith("file://") for u in requests + requests2)
