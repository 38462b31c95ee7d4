"""The match runner with real subprocess bots: every preset between the example bots of three languages,
replays that verify, seeds and deals that fix a match, and every failure of a deliberately broken bot."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from conftest import group_members

from referee.engine import PRESETS, Deal, shuffled_deal
from referee.match import MatchConfig, MatchResult, TimeControl, play_match, run_match, run_matches
from referee.replay import verify
from referee.seats import BotSeat
from referee.seats.process import Limits

UNBOXED = Limits(sandbox="none")  # for bots that spy into a host file (a sandboxed bot cannot write there)

ROOT = Path(__file__).parent.parent
BROKEN = str(Path(__file__).parent / "bots" / "broken_bot.py")
FIRST = str(Path(__file__).parent / "bots" / "first_bot.py")
PY, JS, C, GREEDY = (
    "bots/random_bot.py --seed 1",
    "bots/random_bot.js",
    "bots/random_bot_c.sh",
    "bots/greedy_bot.py",
)


@pytest.fixture(autouse=True)
def _repo_cwd(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


@pytest.mark.parametrize("pair", [(PY, JS), (C, GREEDY), (JS, C)], ids=["py-js", "c-greedy", "js-c"])
def test_every_preset_plays_to_the_end_and_the_replay_verifies(
    preset_name: str, pair: tuple[str, str], tmp_path: Path
) -> None:
    path = tmp_path / "r.jsonl"
    result = run_match(pair, MatchConfig(PRESETS[preset_name], seed=11, replay_path=path))
    assert result.forfeit is None, result.forfeit
    assert result.reason in ("rounds", "broke")
    assert result.decisions > 0
    report = verify(path)
    assert report.ok, report.summary()
    assert report.decisions == result.decisions
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert [{k: b[k] for k in ("seat", "command")} for b in lines[0]["bots"]] == [
        {"seat": 1, "command": pair[0]}, {"seat": 2, "command": pair[1]}]  # fmt: skip
    assert lines[-1]["winner"] == (None if result.winner is None else result.winner + 1)
    assert [x["seat"] for x in lines if x["type"] == "hello"] == [1, 2]


@pytest.fixture(params=["guide", "cardavia", "koikoi-japan"])
def preset_name(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _strip(path: Path) -> list[dict[str, object]]:
    out = []
    for line in path.read_text().splitlines():
        obj = json.loads(line)
        obj.pop("created", None)
        obj.pop("ms", None)
        out.append(obj)
    return out


def test_a_seed_reproduces_a_match(tmp_path: Path) -> None:
    a, b, c = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "c.jsonl"
    rules = PRESETS["koikoi-japan"]
    bots = ("bots/random_bot.py --seed 4", "bots/random_bot.py --seed 5")
    ra = run_match(bots, MatchConfig(rules, seed=99, replay_path=a))
    rb = run_match(bots, MatchConfig(rules, seed=99, replay_path=b))
    run_match(bots, MatchConfig(rules, seed=100, replay_path=c))
    assert ra == rb
    assert _strip(a) == _strip(b)
    assert _strip(a) != _strip(c)


def test_deals_set_the_exact_cards(tmp_path: Path) -> None:
    deal = shuffled_deal(12345, 0)
    data = deal.to_json()
    data["hands"][0], data["hands"][1] = data["hands"][1], data["hands"][0]  # a deal no seed gives
    path = tmp_path / "r.jsonl"
    result = run_match((FIRST, FIRST), MatchConfig(PRESETS["cardavia"], seed=1, deals=(Deal.from_json(data),),
                                                   first_dealer=1, replay_path=path))  # fmt: skip
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    first_deal = next(x for x in lines if x["type"] == "event" and x["event"] in ("round_start", "misdeal"))
    assert {k: first_deal[k] for k in ("hands", "field", "stock")} == data
    assert lines[0]["deals"] == [data]
    assert lines[0]["first_dealer"] == 2
    assert first_deal["dealer"] == 2
    assert verify(path).ok
    assert result.forfeit is None


# ------------------------------------------------------------------------------------------------- failures

FAST = TimeControl(startup_ms=5000, move_ms=200, bank_ms=100)


def _play_broken(
    mode: str, tmp_path: Path, *, time: TimeControl = FAST, seat: int = 0
) -> tuple[MatchResult, int]:
    """Play the broken bot in ``seat`` against the first-legal bot; return the result and its group."""
    path = tmp_path / "r.jsonl"

    async def main() -> tuple[MatchResult, int]:
        bad = BotSeat(f"{BROKEN} {mode}", label="bad")
        good = BotSeat(FIRST, label="good")
        seats = (bad, good) if seat == 0 else (good, bad)
        try:
            result = await play_match(
                seats, MatchConfig(PRESETS["guide"], seed=3, time=time, replay_path=path)
            )
        finally:
            await asyncio.gather(bad.close(), good.close())
        assert bad.process.pid is not None
        return result, bad.process.pid

    result, pgid = asyncio.run(main())
    report = verify(path)
    assert report.ok, report.summary()  # a forfeit is a result that verifies
    assert group_members(pgid) == []
    return result, pgid


@pytest.mark.parametrize(
    ("mode", "reason", "detail"),
    [
        ("hang", "timeout", "no answer to request"),
        ("child_hang", "timeout", "no answer to request"),
        ("ignore_term", "timeout", "no answer to request"),
        ("crash", "crash", "status 5"),
        ("invalid_json", "invalid_json", "not a JSON line"),
        ("wrong_shape", "invalid_message", "move"),
        ("illegal", "illegal_action", "not one of the legal actions"),
        ("oversized", "oversized_line", "longer than"),
        ("double", "invalid_message", "does not answer request"),
        ("hang_hello", "timeout", "no hello within 500 ms"),
        ("crash_hello", "crash", "status 3"),
        ("mismatch", "protocol_mismatch", "koikoi/9"),
    ],
)
def test_a_broken_bot_forfeits_and_leaves_no_process(
    mode: str, reason: str, detail: str, tmp_path: Path
) -> None:
    time = TimeControl(startup_ms=500, move_ms=200, bank_ms=100) if mode == "hang_hello" else FAST
    for seat in (0, 1) if mode in ("hang", "illegal") else (1,):
        result, _ = _play_broken(mode, tmp_path, time=time, seat=seat)
        assert result.reason == "forfeit"
        assert result.forfeit is not None
        assert (result.forfeit.seat, result.forfeit.reason) == (seat, reason), result.forfeit
        assert detail in result.forfeit.detail
        assert result.winner == 1 - seat


def test_the_offender_gets_an_error_line_before_it_forfeits(tmp_path: Path) -> None:
    spy = tmp_path / "spy.txt"
    result = run_match(
        (f"{BROKEN} spy {spy}", f"{BROKEN} illegal"), MatchConfig(PRESETS["guide"], 3, time=FAST), limits=UNBOXED
    )
    assert result.forfeit is not None and result.forfeit.reason == "illegal_action"
    # the spy (seat 1) played on normally and saw the bye; the offender is told why
    seen = [json.loads(x)["type"] for x in spy.read_text().splitlines()]
    assert seen[0] == "hello" and seen[-1] == "bye" and "error" not in seen


def test_both_bots_failing_the_handshake_is_a_double_forfeit(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    config = MatchConfig(PRESETS["guide"], 3, time=FAST, replay_path=path)
    result = run_match((f"{BROKEN} crash_hello", f"{BROKEN} mismatch"), config)
    assert result.winner is None and result.forfeit is not None
    assert "seat 2 failed too: protocol_mismatch" in result.forfeit.detail
    assert verify(path).ok


def test_the_bank_pays_for_slow_answers(tmp_path: Path) -> None:
    """A bot slower than move_ms but within its bank plays on; the bank shrinks in the requests it gets."""
    spy = tmp_path / "spy.txt"
    slow = tmp_path / "slow.py"
    slow.write_text(
        "import json, sys, time\n"
        f"log = open({str(spy)!r}, 'a')\n"
        "for line in sys.stdin:\n"
        "    m = json.loads(line)\n"
        "    if m['type'] == 'hello': print(json.dumps({'type': 'hello', 'name': 'slow'}), flush=True)\n"
        "    if m['type'] == 'request':\n"
        "        log.write(json.dumps(m['time']) + '\\n'); log.flush()\n"
        "        time.sleep(0.06)\n"
        "        print(json.dumps({'type': 'action', 'id': m['id'], 'action': m['legal'][0]}), flush=True)\n"
    )
    tc = TimeControl(startup_ms=5000, move_ms=10, bank_ms=100_000)
    result = run_match((str(slow), FIRST), MatchConfig(PRESETS["cardavia"], 5, time=tc), limits=UNBOXED)
    assert result.forfeit is None
    banks = [json.loads(x)["bank_ms"] for x in spy.read_text().splitlines()]
    assert banks[0] == 100_000
    assert all(b > a for a, b in zip(banks[1:], banks, strict=False))  # strictly decreasing
    assert banks[-1] <= 100_000 - 50 * (len(banks) - 1)


def test_bots_are_reused_across_games_and_replaced_after_a_failure(tmp_path: Path) -> None:
    spy = tmp_path / "spy.txt"
    configs = [MatchConfig(PRESETS["cardavia"], seed=s, match_id=f"m-{s:04d}", time=FAST) for s in (1, 2, 3)]
    results = run_matches((f"{BROKEN} spy {spy}", FIRST), configs, limits=UNBOXED)
    assert [r.match_id for r in results] == ["m-0001", "m-0002", "m-0003"]
    assert all(r.forfeit is None for r in results)
    msgs = [json.loads(x) for x in spy.read_text().splitlines()]
    kinds = [m["type"] for m in msgs if m["type"] in ("hello", "new_match", "bye")]
    assert kinds == ["hello", "new_match", "new_match", "bye"]
    assert [m["match"]["index"] for m in msgs if m["type"] in ("hello", "new_match")] == [1, 2, 3]
    ids = [m["id"] for m in msgs if m["type"] == "request"]
    assert ids == list(range(1, len(ids) + 1))  # increasing per process, across matches
