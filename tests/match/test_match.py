"""The match runner. With real subprocess bots: every preset between the example bots of three languages,
replays that verify, seeds and deals that fix a match, and the failures a process shows (hangs, crashes,
oversized lines). With scripted seats in memory: every bad answer and its recorded reason, the time bank to the
millisecond, seat reuse and replacement, what each seat is sent."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from referee.engine import PRESETS, Deal, shuffled_deal
from referee.match import (
    Failure,
    MatchConfig,
    MatchResult,
    SeatFactory,
    Termination,
    TimeControl,
    play_match,
    run_match,
    run_matches,
)
from referee.protocol import encode, validate_referee_message
from referee.replay import verify
from referee.seats import BotSeat, SeatFailure
from referee.seats.function import FunctionSeat
from referee.seats.process import Limits
from referee.seats.scripted import Answer, ScriptedSeat, first_legal, last_legal
from tests.helpers import BROKEN, FIRST, ROOT, group_members

UNBOXED = Limits(sandbox="none")  # for bots that spy into a host file (a sandboxed bot cannot write there)

PY, JS, C, GREEDY = (
    "bots/random_bot.py --seed 1",
    "bots/random_bot.js",
    "bots/random_bot_c.sh bots/c/random_bot.c",  # the sandbox reads only the files named on the command line
    "bots/greedy_bot.py",
)


@pytest.fixture(autouse=True)
def _repo_cwd(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


@pytest.mark.slow
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
    assert lines[-1]["winner"] == result.winner_number
    assert [x["seat"] for x in lines if x["type"] == "hello"] == [1, 2]


@pytest.fixture(params=["guide", "cardavia", "koikoi-japan", "nintendo"])
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


@pytest.mark.slow
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

FAST = TimeControl(startup_ms=5000, move_ms=1000, bank_ms=2000)
"""A clock a hang runs out of in 3 s, and the healthy bot, starved on a busy machine, does not."""
ROOMY = TimeControl(startup_ms=60_000, move_ms=10_000, bank_ms=60_000)  # where the clock is not the point


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


UNFINISHED = json.dumps('{"type": "action", "id": 2,')[:-1]  # the quoted answer's start (no closing quote yet)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("mode", "reason", "detail"),
    [
        ("hang", "timeout", "no answer to request"),
        ("child_hang", "timeout", "no answer to request"),
        ("ignore_term", "timeout", "no answer to request"),
        ("crash", "crash", "status 5"),
        ("oversized", "oversized_line", "longer than"),
        ("double", "invalid_message", "does not answer request"),
        ("illegal", "illegal_action", "not one of the legal actions"),
        ("hang_hello", "timeout", "no hello within 3000 ms (is each line it writes flushed?)"),
        ("crash_hello", "crash", "status 3"),
        ("no_newline", "crash", "status 0; its last output, with no newline after it: " + UNFINISHED),
    ],
)
def test_a_broken_bot_forfeits_and_leaves_no_process(
    mode: str, reason: str, detail: str, tmp_path: Path
) -> None:
    time = TimeControl(startup_ms=3000, move_ms=1000, bank_ms=2000) if mode == "hang_hello" else FAST
    for seat in (0, 1) if mode == "hang" else (1,):
        result, _ = _play_broken(mode, tmp_path, time=time, seat=seat)
        assert result.reason == "forfeit"
        assert result.forfeit is not None
        assert (result.forfeit.seat, result.forfeit.reason) == (seat, reason), result.forfeit
        assert detail in result.forfeit.detail
        assert result.winner == 1 - seat


def test_both_bots_failing_the_handshake_is_a_double_forfeit(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    config = MatchConfig(PRESETS["guide"], 3, time=FAST, replay_path=path)
    result = run_match((f"{BROKEN} crash_hello", f"{BROKEN} mismatch"), config)
    assert result.winner is None and result.forfeit is not None
    assert "seat 2 failed too: protocol_mismatch" in result.forfeit.detail
    assert verify(path).ok


def test_a_bot_failing_the_handshake_is_told_its_own_failure_never_the_other_bot_s_words(tmp_path: Path) -> None:
    # both fail: seat 1 answers hello with a bad line and stays to read; seat 2 prints a line and exits. The
    # record says both; what seat 1 reads is its own failure only (no channel from one contestant to the other)
    heard = tmp_path / "heard.txt"
    listener = tmp_path / "listener.py"
    listener.write_text(  # each line kept at once, and it leaves once told: nothing waits on the referee's close
        "import signal, sys\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nprint('not a hello', flush=True)\n"
        f"with open({str(heard)!r}, 'a') as out:\n    for line in sys.stdin:\n        out.write(line)\n"
        "        out.flush()\n        if '\"error\"' in line:\n            break\n"
    )
    talker = tmp_path / "talker.py"
    talker.write_text("import sys\nprint('a-word-for-seat-1', flush=True)\nsys.exit(3)\n")
    config = MatchConfig(PRESETS["guide"], 3, time=FAST)
    both = (f"{sys.executable} {listener}", f"{sys.executable} {talker}")
    result = run_match(both, config, limits=Limits(sandbox="none"))
    assert result.winner is None and result.forfeit is not None and result.forfeit.seat == 0
    assert "seat 2 failed too" in result.forfeit.detail and "a-word-for-seat-1" in result.forfeit.detail
    told = [json.loads(line) for line in heard.read_text().splitlines()]
    errors = [m for m in told if m["type"] == "error"]
    assert errors and "you forfeit the match" in errors[0]["message"], told
    assert "a-word-for-seat-1" not in heard.read_text() and "seat 2" not in heard.read_text()


def test_bots_are_reused_across_games_and_replaced_after_a_failure(tmp_path: Path) -> None:
    spy = tmp_path / "spy.txt"
    configs = [MatchConfig(PRESETS["cardavia"], seed=s, match_id=f"m-{s:04d}", time=ROOMY) for s in (1, 2, 3)]
    results = run_matches((f"{BROKEN} spy {spy}", FIRST), configs, limits=UNBOXED)
    assert [r.match_id for r in results] == ["m-0001", "m-0002", "m-0003"]
    assert all(r.forfeit is None for r in results)
    msgs = [json.loads(x) for x in spy.read_text().splitlines()]
    kinds = [m["type"] for m in msgs if m["type"] in ("hello", "new_match", "bye")]
    assert kinds == ["hello", "new_match", "new_match", "bye"]
    assert [m["match"]["index"] for m in msgs if m["type"] in ("hello", "new_match")] == [1, 2, 3]
    ids = [m["id"] for m in msgs if m["type"] == "request"]
    assert ids == list(range(1, len(ids) + 1))  # increasing per process, across matches


ONE_MATCH = (
    "import sys, json\n"
    "for line in sys.stdin:\n"
    "    m = json.loads(line)\n"
    "    if m['type'] == 'hello': print(json.dumps({'type': 'hello', 'name': 'once'}), flush=True)\n"
    "    if m['type'] == 'request':\n"
    "        print(json.dumps({'type': 'action', 'id': m['id'], 'action': m['legal'][0]}), flush=True)\n"
    "    if m.get('event') == 'match_end': sys.exit(0)\n"
)
"""A bot that plays one match and exits after its ``match_end``."""


@pytest.mark.parametrize("both", [False, True])
def test_a_reused_bot_that_ended_after_its_last_match_forfeits_the_next_at_once(tmp_path: Path, both: bool) -> None:
    once = tmp_path / "once.py"
    once.write_text(ONE_MATCH)

    async def main() -> MatchResult:
        awake = Limits(ponder=True)  # a frozen bot cannot end between matches: it ends when next asked
        seats = (BotSeat(str(once), limits=awake), BotSeat(str(once) if both else FIRST, limits=awake))
        try:
            first = await play_match(seats, MatchConfig(PRESETS["koikoi-japan"], 1, time=ROOMY))
            assert first.forfeit is None
            await asyncio.wait_for(seats[0].process.exit_text(60.0), 90.0)  # it has exited, and the loop knows
            if both:
                await asyncio.wait_for(seats[1].process.exit_text(60.0), 90.0)
            assert seats[0].process.returncode == 0
            return await play_match(seats, MatchConfig(PRESETS["koikoi-japan"], 2, time=ROOMY))
        finally:
            await asyncio.gather(*(s.close() for s in seats))

    result = asyncio.run(main())
    assert result.forfeit is not None and result.forfeit.reason is Failure.CRASH and result.decisions == 0
    assert "exited with status 0" in result.forfeit.detail
    assert result.winner == (None if both else 1)


# ------------------------------------------------------------------------- scripted seats: no process at all


def _scripted(*seats: ScriptedSeat) -> tuple[SeatFactory, SeatFactory]:
    """Factories that hand out the given seats (each once)."""
    return (lambda config, i: seats[0]), (lambda config, i: seats[1])


def _play_scripted(bad: ScriptedSeat, tmp_path: Path, *, seat: int = 1, time: TimeControl = FAST) -> MatchResult:
    good = ScriptedSeat("good", policy=first_legal)
    pair = (bad, good) if seat == 0 else (good, bad)
    path = tmp_path / "r.jsonl"
    result = run_match(_scripted(*pair), MatchConfig(PRESETS["guide"], seed=3, time=time, replay_path=path))
    report = verify(path)
    assert report.ok, report.summary()  # a forfeit is a result that verifies
    bad.assert_done()
    assert good.received[-1] == {"type": "bye"}  # the other seat played on and was let go as usual
    return result


REQUEST_2 = {"type": "request", "id": 2}


@pytest.mark.parametrize(
    ("answer", "reason", "detail"),
    [
        (b"{not json", "invalid_json", "request 2: not a JSON line"),
        ({"type": "action", "id": 2, "move": {"koikoi": True}}, "invalid_message", "request 2: "),
        ({"type": "action", "id": 2, "action": {"play": "pine-crane", "koikoi": True}}, "invalid_message", "action"),
        ({"type": "action", "id": 2, "action": {"play": "no-such-card"}}, "invalid_message", '"no-such-card" is not a'),
        ({"type": "hello", "name": "again"}, "invalid_message", "expected an action for request 2"),
        ({"type": "action", "id": 1, "action": {"koikoi": True}}, "invalid_message", "does not answer request 2"),
        ({"koikoi": True}, "illegal_action", 'request 2: {"koikoi": true} is not one of the legal actions'),
        ({"type": "hello", "name": "x", "protocol": "koikoi/9"}, "protocol_mismatch", "koikoi/9"),
    ],
    ids=["not-json", "no-action", "two-forms", "unknown-card", "a-hello", "stale-id", "illegal", "mismatch"],
)
@pytest.mark.parametrize("seat", [0, 1])
def test_a_bad_answer_forfeits_with_its_reason(
    answer: Answer, reason: str, detail: str, seat: int, tmp_path: Path
) -> None:
    """A malformed line (invalid_json, invalid_message) and a well-formed illegal one (illegal_action) are
    told apart; the offender is told why in an error line and gets no bye."""
    bad = ScriptedSeat("bad", policy=first_legal)
    bad.expect({"type": "hello"})
    bad.expect({"type": "request", "id": 1})
    bad.expect(REQUEST_2, answer)
    result = _play_scripted(bad, tmp_path, seat=seat)
    assert result.reason is Termination.FORFEIT and result.winner == 1 - seat
    assert result.forfeit is not None
    assert (result.forfeit.seat, result.forfeit.reason) == (seat, Failure(reason)), result.forfeit
    assert detail in result.forfeit.detail
    assert result.decisions == (3 if seat == 0 else 2)  # seat 2 leads under these rules
    last = bad.received[-1]
    assert last["type"] == "error" and last["message"].startswith(f"you forfeit the match: {reason}: ")
    assert {"type": "bye"} not in bad.received


@pytest.mark.parametrize(
    ("hello", "reason", "detail"),
    [
        (b"hi", "invalid_json", "hello: not a JSON line"),
        ({"type": "action", "id": 1, "action": {"koikoi": True}}, "invalid_message", "expected a hello"),
        ({"type": "hello", "name": "x", "protocol": "koikoi/2"}, "protocol_mismatch", "hello: bot speaks 'koikoi/2'"),
        ({"type": "hello", "name": ""}, "invalid_message", "hello: hello.name"),
    ],
)
def test_a_bad_hello_forfeits_before_any_card_is_dealt(
    hello: Answer, reason: str, detail: str, tmp_path: Path
) -> None:
    bad = ScriptedSeat("bad", hello=hello)
    result = _play_scripted(bad, tmp_path)
    assert result.forfeit is not None and result.forfeit.reason == reason and detail in result.forfeit.detail
    assert result.decisions == 0 and result.winner == 0
    assert [m["type"] for m in bad.received] == ["hello", "error"]


def test_a_failure_only_the_seat_sees_is_recorded_as_it_says(tmp_path: Path) -> None:
    bad = ScriptedSeat("bad", policy=first_legal)
    bad.expect({"type": "hello"})
    bad.expect({"type": "request", "id": 1}, SeatFailure(Failure.CRASH, "exited with status 9"))
    result = _play_scripted(bad, tmp_path)
    assert result.forfeit is not None
    assert (result.forfeit.reason, result.forfeit.detail) == (Failure.CRASH, "exited with status 9")


def test_the_bank_pays_for_slow_answers_to_the_millisecond(tmp_path: Path) -> None:
    """Each answer takes 60 ms against 10 ms per move: 50 ms come out of the bank each time, as the requests
    show; once the bank is spent the seat forfeits with a timeout."""
    slow = ScriptedSeat("slow", policy=lambda request: (request["legal"][0], 60.0))
    fast = ScriptedSeat("fast", policy=first_legal)
    tc = TimeControl(startup_ms=5000, move_ms=10, bank_ms=1000)
    result = run_match(_scripted(slow, fast), MatchConfig(PRESETS["koikoi-japan"], 5, time=tc))
    banks = [m["time"]["bank_ms"] for m in slow.received if m["type"] == "request"]
    assert banks == [1000 - 50 * k for k in range(len(banks))]
    assert len(banks) == 21  # the 21st answer overdraws the bank: 1000 ms pay for 20 slow answers
    assert all(m["time"]["move_ms"] == 10 for m in slow.received if m["type"] == "request")
    assert result.forfeit is not None and result.forfeit.reason is Failure.TIMEOUT
    assert result.forfeit.detail == "no answer to request 21 within 10 ms"
    # a seat without a clock (a person) is never charged
    calm = ScriptedSeat("calm", policy=lambda request: (request["legal"][0], 60.0), timed=False)
    result = run_match(_scripted(calm, ScriptedSeat("fast", policy=first_legal)),
                       MatchConfig(PRESETS["koikoi-japan"], 5, time=tc))  # fmt: skip
    assert result.forfeit is None
    assert {m["time"]["bank_ms"] for m in calm.received if m["type"] == "request"} == {1000}


def test_an_answer_later_than_move_and_bank_is_a_timeout() -> None:
    late = ScriptedSeat("late", policy=lambda request: (request["legal"][0], 1101.0))
    tc = TimeControl(startup_ms=5000, move_ms=100, bank_ms=1000)
    other = ScriptedSeat("b", policy=first_legal)
    result = run_match(_scripted(late, other), MatchConfig(PRESETS["guide"], 3, time=tc))
    assert result.forfeit is not None and result.forfeit.reason is Failure.TIMEOUT
    assert result.forfeit.detail == "no answer to request 1 within 1100 ms"


def test_seats_are_reused_and_replaced_after_a_failure() -> None:
    made: list[ScriptedSeat] = []

    def factory(config: MatchConfig, i: int) -> ScriptedSeat:
        def policy(request: dict[str, Any]) -> Answer:
            return b"oops" if seat.name == "s1" and seat.matches == 2 else first_legal(request)  # in m-0002

        seat = ScriptedSeat(f"s{len(made)}", policy=policy)
        made.append(seat)
        return seat

    configs = [MatchConfig(PRESETS["cardavia"], seed=s, match_id=f"m-{s:04d}", time=FAST) for s in (1, 2, 3, 4)]
    results = run_matches((factory, factory), configs)  # (seed 4 ends with a hand yaku before any request)
    assert [r.match_id for r in results] == ["m-0001", "m-0002", "m-0003", "m-0004"]
    assert [r.forfeit is not None for r in results] == [False, True, False, False]
    assert [s.name for s in made] == ["s0", "s1", "s2"]  # s1 fails in m-0002; s2 replaces it from m-0003
    first = made[0]
    kinds = [m["type"] for m in first.received if m["type"] in ("hello", "new_match", "bye")]
    assert kinds == ["hello", "new_match", "new_match", "new_match", "bye"]
    assert [m["match"]["index"] for m in first.received if m["type"] in ("hello", "new_match")] == [1, 2, 3, 4]
    ids = [m["id"] for m in first.received if m["type"] == "request"]
    assert ids == list(range(1, len(ids) + 1))  # increasing per seat, across matches
    assert all(s.closed for s in made)


def test_a_player_who_quits_ends_the_series() -> None:
    quitter = ScriptedSeat("person", policy=first_legal, timed=False)
    quitter.expect({"type": "hello"})
    quitter.expect({"type": "request"}, SeatFailure(Failure.QUIT, "the player typed q"))
    configs = [MatchConfig(PRESETS["guide"], seed=s, match_id=f"m-{s:04d}") for s in (1, 2, 3)]
    results = run_matches(_scripted(quitter, ScriptedSeat("bot", policy=first_legal)), configs)
    assert len(results) == 1
    assert results[0].forfeit is not None and results[0].forfeit.reason is Failure.QUIT


def test_events_reach_each_seat_filtered_and_the_replay_in_full(tmp_path: Path) -> None:
    seats = (ScriptedSeat("a", policy=last_legal), ScriptedSeat("b", policy=first_legal))
    path = tmp_path / "r.jsonl"
    run_match(_scripted(*seats), MatchConfig(PRESETS["koikoi-japan"], 7316402915352, replay_path=path))
    replay = [json.loads(x) for x in path.read_text().splitlines()]
    deals = [x for x in replay if x["type"] == "event" and x["event"] in ("round_start", "misdeal")]
    assert any(d["event"] == "misdeal" for d in deals)
    for i, seat in enumerate(seats):
        got = [m for m in seat.received if m["type"] == "event" and m["event"] in ("round_start", "misdeal")]
        assert len(got) == len(deals)
        for mine, full in zip(got, deals, strict=True):
            assert "hands" not in mine and "stock" not in mine
            if mine["event"] == "round_start":
                assert mine["hand"] == full["hands"][i] and mine["opponent_hand_size"] == len(full["hands"][1 - i])
                assert mine["stock_size"] == len(full["stock"])
        public = [m for m in seat.received if m["type"] == "event" and m["event"] not in ("round_start", "misdeal")]
        assert public == [x for x in replay if x["type"] == "event" and x["event"] not in ("round_start", "misdeal")]
    seats[0].assert_done()


def test_a_bot_name_with_a_bidi_override_is_refused_in_its_hello(tmp_path: Path) -> None:
    """A real bot process whose hello names it with U+202E forfeits with invalid_message before any deal; the
    name never reaches the result or the replay."""
    bot = tmp_path / "bidi.py"
    bot.write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    if json.loads(line)['type'] == 'hello':\n"
        "        print(json.dumps({'type': 'hello', 'name': 'good\\u202eexe.txt'}), flush=True)\n"
    )
    path = tmp_path / "r.jsonl"
    config = MatchConfig(PRESETS["guide"], 3, time=FAST, replay_path=path)
    result = run_match((FIRST, f"{sys.executable} {bot}"), config)
    assert result.forfeit is not None
    assert (result.forfeit.seat, result.forfeit.reason) == (1, Failure.INVALID_MESSAGE)
    assert "bidi overrides" in result.forfeit.detail and "found U+202E at character 5" in result.forfeit.detail
    assert result.decisions == 0
    assert "\u202e" not in path.read_text(encoding="utf-8") and "\u202e" not in "".join(result.names)
    assert verify(path).ok


@pytest.mark.parametrize(
    ("preset", "seed"), [("koikoi-japan", 7316402915352), ("guide", 1), ("cardavia", 7316402915461)]
)
def test_every_message_a_seat_gets_is_a_valid_protocol_message(preset: str, seed: int) -> None:
    """Through scripted seats (no process): hello, events, requests, error, bye all fit the wire models."""
    seats = [ScriptedSeat("a", policy=last_legal), ScriptedSeat("b", policy=first_legal)]
    seats[1].expect({"type": "hello"})
    seats[1].expect({"type": "request"})
    seats[1].expect({"type": "request"}, {"koikoi": "no"})  # malformed: the seat gets an error line
    run_match(_scripted(*seats), MatchConfig(PRESETS[preset], seed))
    for seat in seats:
        assert seat.received
        for msg, line in zip(seat.received, seat.lines, strict=True):
            validate_referee_message(msg)
            assert line == encode(msg)


@pytest.mark.slow
@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_earlier_decision_is_in_the_replay_file_when_a_seat_is_asked(tmp_path: Path, preset: str) -> None:
    path = tmp_path / "m.jsonl"
    seen: list[int] = []

    def choose(request: dict[str, Any]) -> dict[str, Any]:
        lines = [json.loads(x) for x in path.read_text().splitlines()]  # the file exists from the first request
        assert [x["type"] for x in lines[:3]] == ["header", "hello", "hello"]
        seen.append(sum(x["type"] == "decision" for x in lines))
        legal: list[dict[str, Any]] = request["legal"]
        return legal[len(seen) % len(legal)]

    def seat(config: MatchConfig, i: int) -> FunctionSeat:
        return FunctionSeat(choose, f"f{i}")

    result = run_match((seat, seat), MatchConfig(PRESETS[preset], 11, replay_path=path))
    assert result.forfeit is None and result.decisions == len(seen) > 0
    assert seen == list(range(len(seen)))  # the lines of decision k reached the file before request k + 1
    assert verify(path).ok
