"""The koikoi/1 wire models: built messages fit their models; bad bot lines fail with a protocol error."""

from __future__ import annotations

import contextlib
import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee import protocol as P
from referee.engine import (
    CARD_IDS,
    KOIKOI,
    PRESETS,
    Action,
    ActionKind,
    Misdeal,
    RoundStart,
    Rules,
    State,
    apply,
    card,
    ids_of,
    legal_actions,
    new_match,
    observe,
)
from referee.records import TimeControl


def play_out(rules: Rules, seed: int) -> list[tuple[State, State]]:
    """(before, after) for every step of a random match."""
    rng = random.Random(seed)
    state = new_match(rules, seed=seed)
    steps = [(state, state)]
    while not state.is_over:
        after = apply(state, rng.choice(legal_actions(state)))
        steps.append((state, after))
        state = after
    return steps


# ------------------------------------------------------------------------------------ referee → bot


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(12))
def test_every_built_message_of_a_match_fits_its_model(preset: Rules, seed: int) -> None:
    request_id = 0
    kinds: set[str] = set()
    for before, after in play_out(preset, seed):
        if before is not after:
            for seat in (0, 1):
                view = observe(before, seat)
                if seat == before.to_move:
                    request_id += 1
                    req = P.request_message(request_id, view, 1000, 25_000)
                    model = P.validate_referee_message(req)
                    assert isinstance(model, P.RequestMsg)
                    assert req["legal"] == [P.action_json(a) for a in legal_actions(before)]
                else:
                    with pytest.raises(ValueError):
                        P.request_message(request_id, view, 1000, 25_000)
        for event in after.events:
            for seat in (0, 1):
                msg = P.event_message(event, seat)
                P.validate_referee_message(msg)
                kinds.add(msg["event"])
    assert {"round_start", "round_end", "match_end"} <= kinds
    if "hand_yaku" not in kinds or preset.rounds > 1:  # a single deal won by a hand yaku has no turn
        assert {"play", "draw"} <= kinds


def test_handshake_messages_fit_their_models(preset: Rules) -> None:
    for seat in (0, 1):
        hello = P.hello_message(seat, preset, "m-0001", TimeControl())
        again = P.new_match_message(seat, preset, "m-0002", TimeControl(), index=2)
        assert isinstance(P.validate_referee_message(hello), P.HelloMsg)
        assert isinstance(P.validate_referee_message(again), P.NewMatchMsg)
        assert hello["seat"] == seat + 1 and hello["protocol"] == P.PROTOCOL_VERSION
        assert hello["match"] == {"id": "m-0001", "rounds": preset.rounds, "index": 1}
        assert hello["time"] == {"startup_ms": 10_000, "move_ms": 1_000, "bank_ms": 30_000}
        assert again["match"]["index"] == 2
        assert "seed" not in json.dumps(hello)
    with pytest.raises(ValueError):
        P.hello_message(2, preset, "m", TimeControl())
    P.validate_referee_message(P.error_message("timeout: no answer in 31000 ms"))
    P.validate_referee_message(P.bye_message())


def test_validation_rejects_a_wrong_message() -> None:
    bad = P.hello_message(0, PRESETS["guide"], "m", TimeControl())
    bad["seat"] = 3
    with pytest.raises(Exception, match="seat"):
        P.validate_referee_message(bad)
    extra = {**P.bye_message(), "seed": 7}
    with pytest.raises(Exception, match="seed"):
        P.validate_referee_message(extra)


def test_a_seat_sees_neither_the_other_hand_nor_the_stock() -> None:
    rules = PRESETS["koikoi-japan"]
    for before, after in play_out(rules, 3):
        for seat in (0, 1):
            hidden = set(ids_of(before.hands[1 - seat])) | {
                CARD_IDS[c] for c in before.stock[before.stock_pos :]
            }
            if before.to_move == seat and not before.is_over:
                text = P.encode(P.request_message(1, observe(before, seat), 1, 1)).decode()
                assert not any(f'"{c}"' in text for c in hidden)
            for event in after.events:
                if isinstance(event, RoundStart | Misdeal):
                    msg = P.event_message(event, seat)
                    assert "stock" not in msg and "hands" not in msg
                    mine = ids_of(event.hands[seat]) if msg["event"] == "round_start" else []
                    assert msg.get("hand", []) == mine


def test_encode_is_one_compact_ascii_line() -> None:
    state = new_match(PRESETS["guide"], seed=1)
    msg = P.request_message(1, observe(state, state.to_move), 1000, 30_000)
    line = P.encode(msg)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert b", " not in line and b": " not in line
    assert json.loads(line) == msg
    odd = P.encode(P.error_message("bad \u00e9 \ud800 line\nbreak"))
    assert odd.count(b"\n") == 1 and odd.isascii()
    assert P.encode(P.ByeMsg(type="bye")) == b'{"type":"bye"}\n'


# ------------------------------------------------------------------------------------ bot → referee


def test_hello_forms() -> None:
    msg = P.parse_bot_message(b'{"type":"hello","name":"bot","version":"2.1","protocol":"koikoi/1"}\n')
    assert isinstance(msg, P.BotHello) and msg.name == "bot" and msg.version == "2.1"
    assert P.parse_bot_message('{"type": "hello", "name": "x"}') == P.BotHello(type="hello", name="x")
    with pytest.raises(P.ProtocolMismatch):
        P.parse_bot_message(b'{"type":"hello","name":"bot","protocol":"koikoi/2"}')


@pytest.mark.parametrize(
    "line",
    [
        b'{"type":"hello","name":""}',
        b'{"type":"hello","name":"' + b"x" * 65 + b'"}',
        b'{"type":"hello","name":"a\\u0007b"}',
        b'{"type":"hello","name":"bot","version":"' + b"v" * 65 + b'"}',
        b'{"type":"hello","name":"bot","colour":"red"}',
        b'{"type":"hello","name":7}',
        b'{"type":"action","id":"1","action":{"play":"pine-crane"}}',
        b'{"type":"action","id":1.0,"action":{"play":"pine-crane"}}',
        b'{"type":"action","id":true,"action":{"play":"pine-crane"}}',
        b'{"type":"action","id":1,"action":{"play":"pine"}}',
        b'{"type":"action","id":1,"action":{"koikoi":1}}',
        b'{"type":"action","id":1,"action":{"koikoi":"true"}}',
        b'{"type":"action","id":1,"action":{"play":"pine-crane","koikoi":true}}',
        b'{"type":"action","id":1,"action":{}}',
        b'{"type":"action","id":1,"action":{"play":"pine-crane"},"note":"x"}',
        b'{"type":"action","id":1}',
        b'{"type":"move","id":1,"action":{"play":"pine-crane"}}',
        b'{"id":1,"action":{"play":"pine-crane"}}',
        b"[]",
        b"null",
        b"42",
        b'"hello"',
    ],
)
def test_invalid_messages(line: bytes) -> None:
    with pytest.raises(P.InvalidMessage) as err:
        P.parse_bot_message(line)
    assert err.value.reason == "invalid_message" and str(err.value)


@pytest.mark.parametrize(
    "line",
    [
        b"",
        b"\n",
        b"{",
        b"hello",
        b"\xff\xfe{}",
        b'{"type":"hello","name":"b\xe9"}',
        b"{}{}",
        b"{'a': 1}",
        b"[" * 100_000,
        b'{"type":"hello","name":"\\ud800x"}',
    ],
)
def test_invalid_json(line: bytes) -> None:
    with pytest.raises(P.InvalidJson) as err:
        P.parse_bot_message(line)
    assert err.value.reason == "invalid_json"


def test_huge_numbers_are_messages_not_crashes() -> None:
    msg = P.parse_bot_message(b'{"type":"action","id":' + b"9" * 4000 + b',"action":{"koikoi":true}}')
    assert isinstance(msg, P.BotAction)
    with pytest.raises(P.InvalidMessage):
        P.check_action(msg, 1, [KOIKOI])
    with pytest.raises(P.ProtocolError):
        P.parse_bot_message(b'{"type":"action","id":1e999,"action":{"koikoi":true}}')


def test_check_action() -> None:
    crane, ribbon, chaff = card("pine-crane"), card("pine-ribbon"), card("pine-chaff-1")
    legal = [Action(ActionKind.PLAY, crane, ribbon), Action(ActionKind.PLAY, crane, chaff)]
    line = b'{"type":"action","id":5,"action":{"capture":"pine-ribbon","play":"pine-crane"}}'
    ok = P.parse_bot_message(line)
    assert P.check_action(ok, 5, legal) == legal[0]
    assert P.check_action(line, 5, legal) == legal[0]
    assert P.legal_action(P.parse_answer(line, 5), legal) == legal[0]
    with pytest.raises(P.InvalidMessage, match="does not answer request 6"):
        P.check_action(ok, 6, legal)
    with pytest.raises(P.InvalidMessage, match="does not answer request 6"):
        P.check_action(line, 6, legal)
    with pytest.raises(P.IllegalAction) as err:
        P.check_action(ok, 5, legal[1:])
    assert err.value.reason == "illegal_action"
    hello = P.parse_bot_message(b'{"type":"hello","name":"again"}')
    with pytest.raises(P.InvalidMessage, match="expected an action"):
        P.check_action(hello, 5, legal)
    short = P.parse_bot_message(b'{"type":"action","id":5,"action":{"play":"pine-crane"}}')
    with pytest.raises(P.IllegalAction):
        P.check_action(short, 5, legal)
    # malformed (invalid_message) and well-formed but illegal (illegal_action) are told apart
    with pytest.raises(P.InvalidMessage, match="request 5: "):
        P.check_action(b'{"type":"action","id":5,"action":{"play":"pine-crane","koikoi":true}}', 5, legal)
    with pytest.raises(P.InvalidMessage, match="request 5: "):
        P.check_action(b'{"type":"action","id":5,"action":{"play":"pine-cranes"}}', 5, legal)
    with pytest.raises(P.InvalidJson, match="request 5: not a JSON line"):
        P.check_action(b'{"type":', 5, legal)


def test_check_hello() -> None:
    assert P.check_hello(b'{"type":"hello","name":"a","version":"1"}').name == "a"
    with pytest.raises(P.InvalidMessage, match="expected a hello"):
        P.check_hello(b'{"type":"action","id":1,"action":{"koikoi":true}}')
    with pytest.raises(P.ProtocolMismatch, match=r"^hello: bot speaks 'koikoi/2'"):
        P.check_hello(b'{"type":"hello","name":"a","protocol":"koikoi/2"}')
    with pytest.raises(P.InvalidJson, match=r"^hello: "):
        P.check_hello(b"hi")


def test_failure_names() -> None:
    reasons = {cls.reason for cls in (P.InvalidJson, P.InvalidMessage, P.IllegalAction, P.ProtocolMismatch)}
    assert reasons == {"invalid_json", "invalid_message", "illegal_action", "protocol_mismatch"}


@pytest.mark.parametrize("seed", range(4))
def test_every_legal_action_round_trips_to_the_engine(preset: Rules, seed: int) -> None:
    for before, _after in play_out(preset, seed):
        if before.is_over:
            continue
        req = P.request_message(9, observe(before, before.to_move), 1, 1)
        legal = legal_actions(before)
        for element, engine_action in zip(req["legal"], legal, strict=True):
            line = P.encode({"type": "action", "id": 9, "action": element})
            assert P.check_action(line, 9, legal) == engine_action
            assert P.action_json(engine_action) == element
            assert P.action_from_json(element, before) == engine_action


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8)
    | st.sampled_from(["hello", "action", "pine-crane", "koikoi/1", "play", "capture", "koikoi"]),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.sampled_from(["type", "id", "name", "action", "play", "capture", "koikoi"]), inner,
                      max_size=4),
    max_leaves=20,
)  # fmt: skip


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(json_values)
def test_any_json_value_parses_or_fails_with_a_protocol_error(value: Any) -> None:
    line = json.dumps(value).encode()
    try:
        msg = P.parse_bot_message(line)
    except P.InvalidJson:
        pytest.fail(f"valid JSON reported as invalid: {line!r}")
    except P.ProtocolError:
        return
    assert isinstance(msg, P.BotHello | P.BotAction)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200) | st.text(max_size=200))
def test_any_bytes_parse_or_fail_with_a_protocol_error(line: bytes | str) -> None:
    with contextlib.suppress(P.ProtocolError):
        P.parse_bot_message(line)


REFUSED_IN_NAMES = [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0), *range(0x202A, 0x202F), *range(0x2066, 0x206A)]


@pytest.mark.parametrize("field", ["name", "version"])
@pytest.mark.parametrize("code", REFUSED_IN_NAMES, ids=[f"U+{c:04X}" for c in REFUSED_IN_NAMES])
def test_names_with_control_characters_or_bidi_overrides_are_refused(field: str, code: int) -> None:
    """A name shown in terminals, reports and pages must read as it is: no C0/C1 controls, no bidi overrides."""
    hello = {"type": "hello", "name": "bot", field: f"ab{chr(code)}cd"}
    with pytest.raises(P.InvalidMessage) as err:
        P.check_hello(json.dumps(hello))
    assert str(err.value).startswith(f"hello: hello.{field}: no control characters")
    assert f"found U+{code:04X} at character 3" in str(err.value)


def test_names_may_hold_any_other_character() -> None:
    name = "★ こいこい bot – v2 «ünïcode» \u200d\u00a0é"
    assert P.check_hello(json.dumps({"type": "hello", "name": name, "version": name})).name == name


def test_the_published_schema_refuses_the_same_names() -> None:
    import jsonschema

    schema = P.json_schema()
    schema["anyOf"] = [{"$ref": "#/$defs/BotToReferee"}]
    validator = jsonschema.Draft202012Validator(schema)
    assert validator.is_valid({"type": "hello", "name": "ok ★"})
    for code in (0x1B, 0x85, 0x202E, 0x2067):
        assert not validator.is_valid({"type": "hello", "name": f"a{chr(code)}b"})
