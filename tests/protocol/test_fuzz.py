"""Fuzzing the referee's inputs: bot lines, rules files, actions handed to the engine, and replay files.

Each property says which errors are allowed: the documented ones, and nothing else, whatever the input.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.engine import (
    PRESETS,
    Action,
    ActionKind,
    IllegalActionError,
    RulesError,
    State,
    apply,
    legal_actions,
    load_rules,
    new_match,
    observe,
    rules_from_dict,
)
from referee.match import MatchConfig, TimeControl, run_match
from referee.protocol import BotAction, BotHello, ProtocolError, parse_bot_message, view_json
from referee.replay import ReplayWriter, verify
from tests.helpers import FIRST, ROOT

RANDOM = str(ROOT / "bots" / "random_bot.py") + " --seed 4"

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)

VALID_LINES = [
    b'{"type": "hello", "name": "bot", "version": "1.0", "protocol": "koikoi/1"}',
    b'{"type": "hello", "name": "x"}',
    b'{"type": "action", "id": 3, "action": {"play": "pine-crane"}}',
    b'{"type": "action", "id": 4, "action": {"play": "pine-crane", "capture": "pine-ribbon"}}',
    b'{"type": "action", "id": 5, "action": {"capture": "cherry-curtain"}}',
    b'{"type": "action", "id": 6, "action": {"koikoi": false}}',
]


@st.composite
def mutated(draw: st.DrawFn, seeds: list[bytes]) -> bytes:
    """A valid line with a few random byte edits (insert, delete, replace, cut, repeat)."""
    data = bytearray(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["insert", "delete", "replace", "cut", "repeat"]))
        at = draw(st.integers(0, len(data)))
        if op == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=4))
        elif op == "delete":
            del data[at : at + draw(st.integers(1, 4))]
        elif op == "replace" and at < len(data):
            data[at] = draw(st.integers(0, 255))
        elif op == "cut":
            del data[at:]
        elif op == "repeat":
            data[at:at] = data[max(0, at - 8) : at]
    return bytes(data)


def parse_ok(line: bytes) -> None:
    """Parse and allow only the documented outcomes."""
    try:
        msg = parse_bot_message(line)
    except ProtocolError as exc:
        assert exc.reason in ("invalid_json", "invalid_message", "protocol_mismatch")
        assert len(str(exc)) < 600  # a one-line detail, not the input echoed back
        return
    assert isinstance(msg, BotHello | BotAction)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=200) | mutated(VALID_LINES))
def test_the_protocol_parser_raises_only_protocol_errors(line: bytes) -> None:
    parse_ok(line)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(VALID_LINES),
    st.sampled_from(["type", "name", "version", "protocol", "id", "action", "extra"]),
    json_values,
)
def test_any_field_of_a_bot_message_may_hold_anything(line: bytes, key: str, value: Any) -> None:
    obj = json.loads(line)
    parse_ok(json.dumps({**obj, key: value}).encode())
    if isinstance(obj.get("action"), dict):
        obj["action"][key] = value  # inside the action object
        parse_ok(json.dumps(obj).encode())


@pytest.mark.parametrize(
    "line",
    [b"[" * 100_000, b'{"a":' * 50_000, b'{"type": "action", "id": 1' + b"0" * 5000 + b', "action": {}}',
     b"\xff\xfe\x00", b"", b"\n", "{\"type\": \"hello\", \"name\": \"\u202e\x00\"}".encode(), b"1e999999"],
)  # fmt: skip
def test_pathological_lines_are_protocol_errors(line: bytes) -> None:
    with pytest.raises(ProtocolError):
        parse_bot_message(line)


RULE_KEYS = [*sorted(PRESETS["guide"].to_dict()), "base", "nonsense"]


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(PRESETS)), st.dictionaries(st.sampled_from(RULE_KEYS), json_values, max_size=3))
def test_rules_from_any_mapping_raise_only_rules_errors(preset: str, changes: dict[str, Any]) -> None:
    data = {**PRESETS[preset].to_dict(), **changes}
    for candidate in (data, changes, {"base": preset, **changes}):
        try:
            rules = rules_from_dict(candidate)
        except RulesError:
            continue
        assert rules_from_dict(rules.to_dict()) == rules  # what loads is a consistent set of rules


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    suffix=st.sampled_from([".toml", ".json", ".txt"]),
    content=st.binary(max_size=300) | st.sampled_from(sorted(PRESETS)).map(lambda p: PRESETS[p].to_toml().encode()),
    data=st.data(),
)
def test_rules_files_with_any_content_raise_only_rules_errors(
    suffix: str, content: bytes, data: st.DataObject, tmp_path: Path
) -> None:
    if content and data.draw(st.booleans()):
        at = data.draw(st.integers(0, len(content) - 1))
        content = content[:at] + data.draw(st.binary(min_size=1, max_size=3)) + content[at + 1 :]
    path = tmp_path / f"rules{suffix}"
    path.write_bytes(content)
    try:
        load_rules(path)
    except RulesError as exc:
        assert "\n" not in str(exc).strip() or len(str(exc)) < 2000


def fingerprint(state: State) -> tuple[Any, ...]:
    """Everything observable about a state: both views, the legal actions, the hidden cards, the score."""
    return (
        view_json(observe(state, 0)), view_json(observe(state, 1)), legal_actions(state), state.hands,
        state.field, state.stock, state.stock_pos, state.scores, state.round, state.to_move, state.phase,
    )  # fmt: skip


odd_fields = (
    st.integers(-60, 60) | st.sampled_from([-1, 48, 2**31, 2**64, -(2**63)]) | st.none() | st.booleans()
    | st.floats(allow_nan=True) | st.text(max_size=3) | st.just(()) | st.just(1.0)
)  # fmt: skip


@pytest.mark.slow
@settings(max_examples=500, deadline=None)
@given(
    st.sampled_from(sorted(PRESETS)), st.integers(0, 2**32), st.integers(0, 120),
    st.sampled_from(list(ActionKind)) | st.integers(-3, 9) | st.none() | st.text(max_size=2), odd_fields, odd_fields,
)  # fmt: skip
def test_the_engine_rejects_every_illegal_action_and_changes_nothing(
    preset: str, seed: int, steps: int, kind: Any, card: Any, target: Any
) -> None:
    state = new_match(PRESETS[preset], seed)
    rng = random.Random(seed)
    for _ in range(steps):
        if state.is_over:
            break
        state = apply(state, rng.choice(legal_actions(state)))
    for action in (Action(kind, card, target), (kind, card, target), Action(kind, card), None):
        before = fingerprint(state)
        legal = not state.is_over and action in legal_actions(state) and type(action) is Action
        exact = legal and all(type(x) is int or isinstance(x, ActionKind) for x in action)  # type: ignore[union-attr]
        try:
            apply(state, action)  # type: ignore[arg-type]
        except IllegalActionError:
            assert not exact, f"a legal action was refused: {action!r}"
        else:
            assert legal, f"an illegal action was accepted: {action!r}"
        assert fingerprint(state) == before


@pytest.fixture(scope="module")
def replay(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    path = tmp_path_factory.mktemp("fuzz") / "r.jsonl"
    config = MatchConfig(PRESETS["cardavia"], 29, time=TimeControl(move_ms=5000), replay_path=path)
    assert run_match((FIRST, RANDOM), config).forfeit is None
    return path.read_bytes()


@st.composite
def replay_edit(draw: st.DrawFn, text: bytes) -> bytes:
    """A replay with line-level edits (drop, repeat, swap, cut) and byte-level ones."""
    lines = text.splitlines(keepends=True)
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(["drop", "repeat", "swap", "cut", "bytes", "field"]))
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        if op == "drop" and len(lines) > 1:
            del lines[i]
        elif op == "repeat":
            lines.insert(i, lines[i])
        elif op == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "cut":
            lines[i] = lines[i][: draw(st.integers(0, len(lines[i])))]
            del lines[i + 1 :]
        elif op == "bytes":
            return b"".join(lines[:i]) + draw(mutated([lines[i]])) + b"".join(lines[i + 1 :])
        elif op == "field":
            try:
                obj = json.loads(lines[i])
            except ValueError:  # a line an earlier edit cut short
                continue
            if not isinstance(obj, dict) or not obj:
                continue
            key = draw(st.sampled_from(sorted(obj)))
            obj[key] = draw(json_values)
            lines[i] = json.dumps(obj).encode() + b"\n"
    return b"".join(lines)


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_replay_verify_reports_any_mutated_file_and_never_raises(
    replay: bytes, tmp_path: Path, data: st.DataObject
) -> None:
    content = data.draw(replay_edit(replay))
    path = tmp_path / "mutated.jsonl"
    path.write_bytes(content)
    report = verify(path)  # must not raise
    line = report.summary()
    assert "\n" not in line and line.startswith(str(path))
    if content == replay:
        assert report.ok
    elif not report.ok:
        assert report.truncated or report.error_line is not None


KEY = bytes(range(32))


@pytest.fixture(scope="module")
def signed_replay(replay: bytes, tmp_path_factory: pytest.TempPathFactory) -> bytes:
    path = tmp_path_factory.mktemp("fuzz") / "signed.jsonl"
    writer = ReplayWriter(path, key=KEY)
    for line in replay.decode().splitlines():
        writer.write_line(line)
    writer.close()
    return path.read_bytes()


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_change_to_a_signed_replay_is_rejected_with_the_key(
    signed_replay: bytes, tmp_path: Path, data: st.DataObject
) -> None:
    content = data.draw(replay_edit(signed_replay))
    path = tmp_path / "mutated.jsonl"
    path.write_bytes(content)
    report = verify(path, KEY)  # must not raise
    assert "\n" not in report.summary()
    if content in (signed_replay, signed_replay[:-1]):  # the same lines (perhaps without the last newline)
        assert report.ok
    else:  # whatever changed, a line, a byte, the order or the end: never accepted
        assert not report.ok and (report.truncated or report.error_line is not None)
