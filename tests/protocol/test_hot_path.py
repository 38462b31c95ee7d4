"""The referee's fast paths write and accept exactly what the general ones do: an answer checked from its parsed
dict (:func:`referee.protocol.answer_index`) is accepted only where the models accept it, with the same action;
cached event and action texts and the decision line built from parts are the bytes ``encode`` would write."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.engine import PRESETS, MatchEnd, Misdeal, RoundStart, apply, legal_actions, new_match, observe
from referee.protocol import (
    ProtocolError,
    action_json,
    action_text,
    answer_index,
    encode,
    event_message,
    event_text,
    legal_index,
    legal_text,
    parse_answer,
    public_event_message,
    public_event_text,
    request_legal,
    request_legal_text,
    request_message,
)
from referee.replay import ReplayWriter


def _requests(seeds: range) -> list[dict[str, Any]]:
    out = []
    for seed in seeds:
        state = new_match(PRESETS["koikoi-japan"], seed)
        while not state.is_over:
            view = observe(state, state.to_move)
            out.append(request_message(len(out) + 1, view, 1000, 1000))
            state = apply(state, legal_actions(state)[seed % len(legal_actions(state))])
    return out


REQUESTS = _requests(range(3))


def _slow(line: bytes, rid: int, legal: list[dict[str, Any]]) -> int | None:
    """What the models say: the index of the legal action, or None for any protocol error."""
    try:
        return legal_index(parse_answer(line, rid), legal)
    except ProtocolError:
        return None


VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-2, 3), st.floats(allow_nan=False), st.text(max_size=12),
    st.sampled_from(["play", "capture", "koikoi", "pine-crane", "action", "hello"]),
)  # fmt: skip


@st.composite
def answers(draw: st.DrawFn) -> tuple[bytes, int, list[dict[str, Any]]]:
    """A request's legal list and a line answering it: a legal answer, or one with a field changed, added,
    dropped or retyped, or odd bytes around it."""
    req = draw(st.sampled_from(REQUESTS))
    legal = req["legal"]
    action: Any = dict(draw(st.sampled_from(legal)))
    msg: dict[str, Any] = {"type": "action", "id": req["id"], "action": action}
    kind = draw(st.integers(0, 7))
    if kind == 1:
        msg[draw(st.sampled_from(["type", "id", "action", "extra"]))] = draw(VALUES)
    elif kind == 2:
        del msg[draw(st.sampled_from(["type", "id", "action"]))]
    elif kind == 3 and action:
        action[draw(st.sampled_from(sorted(action)))] = draw(VALUES)
    elif kind == 4:
        action[draw(st.sampled_from(["play", "capture", "koikoi", "x"]))] = draw(VALUES)
    elif kind == 5:
        msg["id"] = draw(st.sampled_from([float(req["id"]), str(req["id"]), True, req["id"] + 1]))
    line = json.dumps(msg, separators=draw(st.sampled_from([(",", ":"), (", ", ": ")]))).encode()
    if kind == 6:
        line = draw(st.sampled_from([b" ", b"\xef\xbb\xbf", b"\t", b"[", b"\xff"])) + line
    elif kind == 7:
        line = line.replace(b'"type"', draw(st.sampled_from([b'"type":"hello","type"', b'"typ\\u0065"', b'"Type"'])))
    return line, req["id"], legal


@pytest.mark.slow
@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=answers())
def test_the_fast_answer_check_accepts_exactly_what_the_models_accept(
    case: tuple[bytes, int, list[dict[str, Any]]],
) -> None:
    line, rid, legal = case
    fast = answer_index(line, rid, legal)
    if fast is not None:
        assert _slow(line, rid, legal) == fast, line


def test_every_legal_answer_takes_the_fast_path() -> None:
    for req in REQUESTS[:200]:
        for i, action in enumerate(req["legal"]):
            for sep in ((",", ":"), (", ", ": ")):
                line = json.dumps({"type": "action", "id": req["id"], "action": action}, separators=sep).encode()
                assert answer_index(line, req["id"], req["legal"]) == i == _slow(line, req["id"], req["legal"])


def test_a_true_is_not_a_one_and_a_one_is_not_true() -> None:
    legal = [{"koikoi": True}, {"koikoi": False}]
    for bad in (b'{"type":"action","id":1,"action":{"koikoi":1}}', b'{"type":"action","id":true,"action":'
                b'{"koikoi":true}}', b'{"type":"action","id":1,"action":{"koikoi":0.0}}'):  # fmt: skip
        assert answer_index(bad, 1, legal) is None and _slow(bad, 1, legal) is None


def test_cached_texts_are_what_encode_writes() -> None:
    for seed in range(4):
        state = new_match(PRESETS["koikoi-japan"], seed)
        while True:
            for e in state.events:
                if not isinstance(e, RoundStart | Misdeal):
                    assert public_event_text(e) + "\n" == encode(public_event_message(e)).decode()
                    assert public_event_text(e) + "\n" == encode(public_event_message(e)).decode()  # cached
                for seat in (0, 1):
                    assert event_text(e, seat) + "\n" == encode(event_message(e, seat)).decode()
            if state.is_over:
                assert isinstance(state.events[-1], MatchEnd)
                break
            legal = legal_actions(state)
            assert legal_text(legal) == json.dumps([action_json(a) for a in legal], separators=(",", ":"))
            assert all(action_text(a) == json.dumps(action_json(a), separators=(",", ":")) for a in legal)
            state = apply(state, legal[-1])


@pytest.mark.slow
def test_a_request_written_from_cached_texts_is_the_json_of_its_dict() -> None:
    for preset in PRESETS:
        for seed in range(6):
            state = new_match(PRESETS[preset], seed)
            while not state.is_over:
                request = request_message(5, observe(state, state.to_move), 1000, 2**40)
                request["id"] = seed + 10**12  # the seat sets the id
                assert encode(request) == (json.dumps(dict(request), separators=(",", ":")) + "\n").encode()
                legal = json.dumps(request["legal"], separators=(",", ":"))
                assert request_legal_text(request) == legal == request_legal_text(dict(request))
                # A lean request (a bot seat's) holds no view or legal objects, and writes the same line.
                lean = request_message(5, observe(state, state.to_move), 1000, 2**40, lean=True)
                lean["id"] = seed + 10**12
                assert "view" not in lean and "legal" not in lean
                assert encode(lean) == encode(request)
                assert request_legal(lean) == request["legal"] == request_legal(request)
                assert request_legal_text(lean) == legal
                lean["id"] = "x"  # the generic encoder's path writes the full request too
                request["id"] = "x"
                assert encode(lean) == encode(request)
                state = apply(state, legal_actions(state)[seed % len(legal_actions(state))])


def test_the_decision_line_from_parts_is_the_line_of_its_dict(tmp_path: Path) -> None:
    a, b = ReplayWriter(tmp_path / "a.jsonl"), ReplayWriter(tmp_path / "b.jsonl")
    for req in REQUESTS[:300:7]:
        for ms in (0.0, 0.1234, 12.5, 1234.56789, 1e-7, 3e16):
            legal = req["legal"]
            a.write({"type": "decision", "seat": 2, "id": req["id"], "decision": req["decision"], "legal": legal,
                     "action": legal[-1], "ms": round(ms, 3)})  # fmt: skip
            b.decision(2, req["id"], req["decision"], json.dumps(legal, separators=(",", ":")),
                       json.dumps(legal[-1], separators=(",", ":")), ms)  # fmt: skip
    a.close()
    b.close()
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
