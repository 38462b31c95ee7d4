"""A tournament's pages in headless Chromium at 1,400 px: the home page, a bot's own page and a match page fit
without horizontal scrolling, the leaderboard leads to the bot pages, and the logs of a failed match are linked
from both the bot's page and the match's page.

A real round robin of three bots on the single-deal cardavia rules; one of them crashes (with a line on stderr)
at its third decision of every process, so its forfeits and their logs are known in advance.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import ROOT

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="no headless Chromium at /usr/bin/chromium"),
]
if CHROMIUM.exists():
    from playwright.sync_api import Browser, Page, sync_playwright

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]  # fmt: skip
WIDTH = 1400
CRASHY = r"""
import json, sys
asked = 0
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"type": "hello", "name": "crashy"}), flush=True)
    elif msg["type"] == "request":
        asked += 1
        if asked == 3:
            sys.stderr.write("crashy: giving up on purpose\n")
            sys.exit(4)
        print(json.dumps({"type": "action", "id": msg["id"], "action": msg["legal"][0]}), flush=True)
    elif msg["type"] == "bye":
        break
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("pages")
    crashy = base / "crashy.py"
    crashy.write_text(CRASHY)
    out = base / "t"
    exe = Path(sys.executable).parent / "koikoi-referee"
    proc = subprocess.run(
        [str(exe), "tournament", "-b", "greedy=bots/greedy_bot.py", "-b", "random=bots/random_bot.py --seed 2",
         "-b", f"crashy={sys.executable} {crashy}", "--rules", "cardavia", "--startup-ms", "20000", "--move-ms",
         "5000", "--bank-ms", "20000", "--pairs", "2", "--seed", "9", "-j", "1", "-o", str(out),
         "--event", "Spring cup", "--event-description", "A long line about the event. " * 12],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False, env={"XDG_DATA_HOME": str(base), "PATH":
        "/usr/bin:/bin"},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield b
        b.close()


def _open(browser: Browser, path: Path) -> tuple[Page, list[str], list[str]]:
    page = browser.new_page(viewport={"width": WIDTH, "height": 900})
    errors: list[str] = []
    requests: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: requests.append(r.url))
    page.goto(path.as_uri())
    return page, errors, requests


def _no_sideways_scroll(page: Page) -> None:
    widths = page.evaluate("() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert widths[0] <= widths[1] <= WIDTH, widths


def _colours(browser: Browser, shot: Path) -> int:
    """Distinct colours sampled from a screenshot (a blank or failed page has one or two)."""
    blank = browser.new_page()
    seen: int = blank.evaluate(
        """async (src) => {
      const img = new Image(); img.src = src; await img.decode();
      const c = document.createElement("canvas"); c.width = img.width; c.height = img.height;
      const g = c.getContext("2d"); g.drawImage(img, 0, 0);
      const d = g.getImageData(0, 0, c.width, c.height).data; const seen = new Set();
      for (let i = 0; i < d.length; i += 4 * 97) seen.add(d[i] + "," + d[i + 1] + "," + d[i + 2]);
      return seen.size;
    }""",
        "data:image/png;base64," + base64.b64encode(shot.read_bytes()).decode(),
    )
    blank.close()
    return seen


def test_the_home_page_fits_1400_px_and_leads_to_each_bot_page(site: Path, browser: Browser, tmp_path: Path) -> None:
    page, errors, requests = _open(browser, site / "index.html")
    _no_sideways_scroll(page)
    assert page.text_content("#event") == "Spring cup"
    links = page.eval_on_selector_all("#leaderboard tbody a", "els => els.map(e => e.getAttribute('href'))")
    assert sorted(links) == ["bots/crashy.html", "bots/greedy.html", "bots/random.html"]
    shot = tmp_path / "home.png"
    page.screenshot(path=str(shot), full_page=True)
    assert _colours(browser, shot) > 20
    page.click("#leaderboard a:text-is('crashy')")
    assert page.url.endswith("/bots/crashy.html")
    assert errors == [] and all(u.startswith("file://") for u in requests)


def test_a_bot_page_shows_its_games_forfeits_logs_times_and_memory(site: Path, browser: Browser,
                                                                   tmp_path: Path) -> None:  # fmt: skip
    doc = json.loads((site / "standings.json").read_text())
    row = next(r for r in doc["standings"] if r["name"] == "crashy")
    page, errors, requests = _open(browser, site / "bots" / "crashy.html")
    _no_sideways_scroll(page)
    games = page.eval_on_selector_all("#games tbody tr", "els => els.map(e => e.dataset.outcome)")
    assert len(games) == row["games"] == 8  # two pairs against each of two bots
    assert games.count("loss") == row["losses"] and games.count("win") == row["wins"]
    crashes = row["forfeits"].get("crash", 0)
    assert crashes > 0  # it crashes at its third decision of every process
    failed = page.eval_on_selector_all("#failed-logs a", "els => els.map(e => e.getAttribute('href'))")
    assert len(failed) == crashes
    for href in failed:  # each failed match's log is there, and holds the bot's last words
        assert "crashy: giving up on purpose" in (site / "bots" / href).resolve().read_text()
    bars = page.eval_on_selector_all("#times rect", "els => els.reduce((n, e) => n + Number(e.dataset.count), 0)")
    assert bars == row["decisions"] > 0  # every decision is in the distribution
    assert page.locator("#bot-history polyline").count() == 1
    assert "MiB" in (page.text_content("#memory") or "")
    shot = tmp_path / "bot.png"
    page.screenshot(path=str(shot), full_page=True)
    assert _colours(browser, shot) > 20
    assert errors == [] and all(u.startswith("file://") for u in requests)


def test_a_match_page_fits_and_links_the_logs_of_that_match(site: Path, browser: Browser, tmp_path: Path) -> None:
    results = [json.loads(line) for line in (site / "results.jsonl").read_text().splitlines() if '"result"' in line]
    failed = next(r for r in results if r["result"].get("forfeit"))
    mid = failed["match_id"]
    page, errors, _ = _open(browser, site / "replays" / f"{mid}.html")
    _no_sideways_scroll(page)
    logs = page.eval_on_selector_all("#links a", "els => els.map(e => e.getAttribute('href'))")
    mine = [h for h in logs if h.startswith("../logs/")]
    assert mine and all(mid in h for h in mine)  # this match's logs, none of another match
    assert any("crashy: giving up on purpose" in (site / "replays" / h).resolve().read_text() for h in mine)
    shot = tmp_path / "match.png"
    page.screenshot(path=str(shot), full_page=True)
    assert _colours(browser, shot) > 20
    assert errors == []
