"""``koikoi-referee check``: every house bot passes, and a bot broken at one item fails at that item."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from referee.compliance import check
from referee.compliance_deals import capture_on_draw, capture_on_play, forced, hand_yaku, koikoi, misdeal
from referee.engine import PRESETS, Event, Phase, State, YakuMade
from tests.helpers import BOTS, ROOT

pytestmark = pytest.mark.slow  # real processes: left out by make test-fast

BREAKER = BOTS / "check_breaker.py"


def run(exe: Path, *args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(exe), *args], cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_the_scripted_deals_force_their_event_whatever_the_bot_plays(name: str) -> None:
    rules = PRESETS[name]
    koi = koikoi(rules)
    assert koi is not None

    def yaku(state: State, event: Event, bot: int) -> bool:
        return isinstance(event, YakuMade) and event.seat == bot

    assert forced(rules, koi.deals, koi.first_dealer, yaku, 3)
    draw = capture_on_draw(rules)
    assert draw is not None
    assert forced(rules, draw.deals, draw.first_dealer,
                  lambda s, e, b: s.phase is Phase.DRAW_CHOICE and s.to_move == b, 1)  # fmt: skip
    assert capture_on_play(rules) is not None
    assert (misdeal(rules) is None) == (not rules.misdeal_field_four)
    assert (hand_yaku(rules) is None) == (rules.teshi_points == 0 or rules.misdeal_hand_four)
    # one bot process plays every item: no deal comes back (the misdeal's redeal is a capture deal of its own)
    items = [f(rules) for f in (capture_on_play, capture_on_draw, misdeal, hand_yaku, koikoi)]
    deals = [d for item in items if item is not None for d in item.deals]
    assert len(set(deals)) == len(deals)


def test_forced_is_false_when_the_bot_can_avoid_the_event() -> None:
    rules = PRESETS["guide"]
    koi = koikoi(rules)
    assert koi is not None

    def never(state: State, event: Event, bot: int) -> bool:
        return False

    assert not forced(rules, koi.deals, koi.first_dealer, never, 3)


@pytest.mark.parametrize(
    ("bot", "rules"),
    [
        ("minimal_bot.py", "guide"), ("random_bot.py", "koikoi-japan"), ("greedy_bot.py", "cardavia"),
        ("random_bot.js", "guide"), ("search_bot.py --ms 20", "cardavia"),
        ("random_bot_c.sh bots/c/random_bot.c", "koikoi-japan"),
    ],
)  # fmt: skip
def test_every_house_bot_passes(referee_exe: Path, bot: str, rules: str) -> None:
    if bot.endswith(".js") and shutil.which("node") is None:
        pytest.fail("node is needed for the JavaScript house bot")
    done = run(referee_exe, "check", f"bots/{bot}", "--rules", rules)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"check bots/{bot}  rules {rules}"
    assert not any(x.startswith("  FAIL") for x in lines)
    passed = [x for x in lines if x.startswith("  PASS")]
    assert len(passed) >= 9  # all but hand yaku, which only cardavia scores
    assert lines[-1].startswith("passed (")


@pytest.mark.parametrize(
    ("mode", "rules", "item"),
    [
        ("no-name", "guide", "hello"),
        ("new-match", "guide", "new_match on a reused process"),
        ("play-choice", "guide", "capture choice on a play"),
        ("draw-choice", "guide", "capture choice on a draw"),
        ("koikoi", "koikoi-japan", "koi-koi or stop"),
        ("misdeal", "guide", "misdeal and redeal"),
        ("hand-yaku", "cardavia", "hand yaku"),
        ("no-yaku", "guide", "a round with no yaku, to the last turn"),
        ("bank", "guide", "answers drawing on the time bank"),
        ("bye", "guide", "bye: the bot exits"),
    ],
)
def test_a_broken_bot_fails_the_item_it_breaks(referee_exe: Path, mode: str, rules: str, item: str) -> None:
    done = run(referee_exe, "check", f"{BREAKER} {mode}", "--rules", rules)
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    failed = next(x for x in lines if x.startswith(f"  FAIL {item}: ")), done.stdout
    hello = next(x for x in lines if x.startswith(("  PASS hello", "  FAIL hello")))
    assert hello.startswith("  FAIL" if mode == "no-name" else "  PASS"), done.stdout
    if mode == "no-name":
        assert "invalid_message" in hello
    elif mode == "bye":
        assert failed[0].endswith("still running 2 s after bye")
    else:
        assert "crash: the bot exited with status 3" in failed[0]
        log = Path(failed[0].rsplit("(its stderr: ", 1)[1].rstrip(")"))
        assert "check_breaker:" in log.read_text()
    assert " item(s) failed; the first: " in lines[-1]


def test_check_as_a_library_call_reports_each_item() -> None:
    seen: list[str] = []
    report = check(f"{sys.executable} {ROOT / 'bots' / 'minimal_bot.py'}", PRESETS["cardavia"],
                   on_item=lambda i: seen.append(i.status))  # fmt: skip
    assert report.passed and report.first_violation() is None
    assert seen == [i.status for i in report.items] and "fail" not in seen
    assert report.items[0].name == "hello"
    assert report.items[0].detail == "name 'minimal', no version"  # its hello names no version


def test_check_of_a_missing_bot_is_one_line_and_exit_2(referee_exe: Path, tmp_path: Path) -> None:
    done = run(referee_exe, "check", str(tmp_path / "nothing.py"))
    assert done.returncode == 2
    assert done.stderr.strip().startswith("koikoi-referee: error: bot file not found")
