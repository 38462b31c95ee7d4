"""Replays: verify re-simulates and names the first bad line; truncated files; any content, no stack trace;
show as a play-by-play, and as one seat saw it."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.engine import PRESETS
from referee.match import MatchConfig, TimeControl, run_match
from referee.records import Termination
from referee.replay import (
    Decision,
    Header,
    HeaderBot,
    Hello,
    ReplayWriter,
    Result,
    printable,
    read_replay,
    show,
    verify,
)
from referee.signing import load_key
from tests.helpers import BOTS, FIRST, ROOT
from tests.replay_factory import engine_states, replay_lines

RANDOM = str(ROOT / "bots" / "random_bot.py") + " --seed 2"


@pytest.fixture(scope="module")
def replay(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("replay") / "r.jsonl"
    result = run_match((FIRST, RANDOM), MatchConfig(PRESETS["koikoi-japan"], 17, replay_path=path))
    assert result.forfeit is None
    return path


def lines_of(path: Path) -> list[dict[str, object]]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def write(path: Path, lines: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def test_a_real_replay_verifies(replay: Path) -> None:
    report = verify(replay)
    assert report.ok, report.summary()
    assert report.lines == len(lines_of(replay))
    assert report.summary().startswith(f"{replay}: ok (")


def _first(lines: list[dict[str, object]], **match: object) -> int:
    return next(i for i, x in enumerate(lines) if all(x.get(k) == v for k, v in match.items()))


def test_a_changed_action_is_reported_at_its_line(replay: Path, tmp_path: Path) -> None:
    lines = lines_of(replay)
    i = next(i for i, x in enumerate(lines) if x["type"] == "decision" and len(x["legal"]) > 1)  # type: ignore[arg-type]
    lines[i]["action"] = lines[i]["legal"][1]  # type: ignore[index]
    report = verify(write(tmp_path / "t.jsonl", lines))
    assert not report.ok and not report.truncated
    # the action is legal, so the line after it (an event) is where the engine disagrees
    assert report.error_line == i + 2
    assert "event differs from the engine" in report.message
    assert report.summary().startswith(f"{tmp_path / 't.jsonl'}: line {i + 2}: ")


def test_a_tampered_event_names_the_field(replay: Path, tmp_path: Path) -> None:
    lines = lines_of(replay)
    i = _first(lines, type="event", event="round_start")
    lines[i]["stock"] = list(reversed(lines[i]["stock"]))  # type: ignore[call-overload]
    report = verify(write(tmp_path / "t.jsonl", lines))
    assert report.error_line == i + 1
    assert "stock" in report.message


def test_a_changed_legal_list_names_the_item_that_differs(replay: Path, tmp_path: Path) -> None:
    # a list's difference is named by its index, never cut off before it (the lists may be long)
    lines = lines_of(replay)
    i = _first(lines, type="decision")
    legal = list(lines[i]["legal"])  # type: ignore[call-overload]
    extra = {"play": "paulownia-chaff-3"} if {"play": "paulownia-chaff-3"} not in legal else {"play": "pine-crane"}
    lines[i]["legal"] = [*legal, extra]
    report = verify(write(tmp_path / "a.jsonl", lines))
    assert report.error_line == i + 1
    assert f"replay has {len(legal) + 1} items, engine {len(legal)}; first extra: {json.dumps(extra)}" in report.message
    lines[i]["legal"] = [*legal[:-1], extra]
    report = verify(write(tmp_path / "b.jsonl", lines))
    assert f"[{len(legal) - 1}].play: replay has {json.dumps(extra['play'])}, engine has" in report.message


def test_an_illegal_action_and_a_wrong_result_are_reported(replay: Path, tmp_path: Path) -> None:
    lines = lines_of(replay)
    i = _first(lines, type="decision")
    lines[i]["action"] = {"koikoi": True}
    report = verify(write(tmp_path / "a.jsonl", lines))
    assert report.error_line == i + 1 and "not one of the legal actions" in report.message
    lines = lines_of(replay)
    lines[-1]["scores"] = [99, 0]
    report = verify(write(tmp_path / "b.jsonl", lines))
    assert report.error_line == len(lines) and "scores" in report.message


def test_a_replay_without_its_result_is_truncated(replay: Path, tmp_path: Path) -> None:
    text = replay.read_text()
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(text.splitlines(keepends=True)[:40]))
    report = verify(cut)
    assert report.truncated and not report.ok and report.lines == 40
    assert "truncated" in report.summary() and "first 40 lines are valid" in report.summary()
    cut.write_text(text[: len(text) // 2])  # killed mid-line
    report = verify(cut)
    assert report.truncated and report.lines == text[: len(text) // 2].count("\n")


@pytest.mark.parametrize(
    ("content", "line", "words"),
    [
        ("", 1, "empty"),
        ("not json\n", 1, "not a JSON line"),
        ("[1, 2]\n", 1, "not a JSON object"),
        ('{"type": "header", "format": "other"}\n', 1, "format"),
        ('{"type": "header", "format": "koikoi-replay/1", "seed": 1, "rules": {"rounds": 0}}\n', 1, "rules"),
        ('{"type": "event"}\n', 1, "expected the header"),
        ("[" * 100_000 + "\n", 1, "not a JSON line"),
    ],
)
def test_bad_files_get_a_line_number_not_a_stack_trace(
    content: str, line: int, words: str, tmp_path: Path
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    report = verify(path)
    assert not report.ok and report.error_line == line
    assert words in report.message


def test_no_header_is_an_error_for_verify_and_show(replay: Path, tmp_path: Path) -> None:
    cut = tmp_path / "cut.jsonl"
    cut.write_text(replay.read_text()[:200])  # the header line cut short: nothing to show
    for path in (cut, tmp_path / "empty.jsonl"):
        path.touch()
        report = verify(path)
        assert not report.ok and not report.truncated and "no header line" in report.message
        lines, problem = show(path)
        assert lines == [] and problem is not None and not problem.truncated
        assert "no header line" in problem.message


def test_an_unreadable_path_is_named_once_without_a_line_number(tmp_path: Path) -> None:
    for path in (tmp_path, tmp_path / "missing.jsonl"):
        summary = verify(path).summary()
        assert summary.startswith(f"{path}: cannot read: ") and summary.count(str(path)) == 1
        _, problem = show(path)
        assert problem is not None and problem.error_line is None and problem.message.startswith("cannot read")


# The fields whose value the engine fixes: a real change to one of them must make the file fail. Every other
# field (names, versions, times, ids) is free: a well-typed change is accepted, a badly typed one fails at once.
DETERMINED = {
    "header": {"type", "format", "seed", "rules"},
    "hello": {"type", "seat"},
    "event": None,  # every field
    "decision": {"type", "seat", "decision", "legal", "action"},
    "result": {"type", "winner", "scores", "rounds", "reason", "forfeit"},
}


def _edit_check(replay: Path, tmp_path: Path, i: int, key: str, value: object) -> None:
    """Set ``key`` of line ``i`` (0-based) to ``value`` and check what verify says.

    Lines before the edited one are untouched, so an error is never reported before it; it may surface later
    (an edited header seed shows at the first event line, a hello's seat at the next hello, a decision's action
    at the event it causes). A real change of a field the engine fixes is always an error.
    """
    lines = replay.read_text().splitlines()
    obj = json.loads(lines[i])
    changed = json.dumps(obj[key]) != json.dumps(value)
    kind = obj["type"]
    obj[key] = value
    lines[i] = json.dumps(obj)
    path = tmp_path / "edit.jsonl"
    path.write_text("\n".join(lines) + "\n")
    report = verify(path)  # must not raise
    line = report.summary()
    assert "\n" not in line and not report.truncated, line
    if not report.ok:
        assert report.error_line is not None and report.error_line >= i + 1, (i, key, value, line)
    determined = DETERMINED[kind]
    if changed and (determined is None or key in determined):
        assert not report.ok, (i, key, value)
    if not changed:
        assert report.ok, line


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_edit_of_a_line_fails_cleanly(replay: Path, tmp_path: Path, data: st.DataObject) -> None:
    lines = replay.read_text().splitlines()
    i = data.draw(st.integers(0, len(lines) - 1))
    key = data.draw(st.sampled_from(sorted(json.loads(lines[i]))))
    value = data.draw(st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=5), st.just([])))
    _edit_check(replay, tmp_path, i, key, value)


@pytest.mark.parametrize(
    ("where", "key", "value"),
    [
        ("header", "seed", 18),  # accepted by the header, surfaces at the first event line
        ("header", "seed", True),
        ("header", "first_dealer", True),
        ("hello", "seat", 2),  # surfaces at the second hello
        ("hello", "seat", True),
        ("decision", "ms", "slow"),
        ("decision", "id", 1.5),
        ("decision", "seat", True),
        ("result", "winner", True),
        ("result", "rounds", 6.0),
    ],
)
def test_edits_that_once_slipped_through(replay: Path, tmp_path: Path, where: str, key: str, value: object) -> None:
    lines = [json.loads(x) for x in replay.read_text().splitlines()]
    i = next(n for n, x in enumerate(lines) if x["type"] == where)
    _edit_check(replay, tmp_path, i, key, value)
    assert not verify(tmp_path / "edit.jsonl").ok


def test_a_seat_s_show_leaves_out_a_forfeit_s_detail(tmp_path: Path) -> None:
    # the detail of an illegal action lists the forfeiting seat's legal actions: its cards (as the pages, a seat's
    # view leaves it out, whichever seat forfeited)
    lines = replay_lines(seed=5, max_decisions=9)
    state = engine_states(lines)[-1]
    detail = "an action not among the legal ones: [{\"play\": \"pine-crane\"}, {\"play\": \"plum-warbler\"}]"
    lines.append({"type": "result", "winner": 1, "scores": list(state.scores), "rounds": state.round,
                  "reason": "forfeit", "forfeit": {"seat": 2, "reason": "illegal_action", "detail": detail},
                  "bots": [{"seat": 1, "name": "alpha"}, {"seat": 2, "name": "beta"}]})  # fmt: skip
    path = write(tmp_path / "f.jsonl", lines)
    full, _ = show(path)
    assert full[-1] == f"result: seat 2 (beta) forfeits: illegal_action: {detail}"
    for seat in (1, 2):
        seen, _ = show(path, seat)
        assert seen[-1] == "result: seat 2 (beta) forfeits: illegal_action" and "pine-crane" not in seen[-1]


def test_play_shows_a_person_no_detail_of_the_bot_s_forfeit() -> None:
    from referee.records import Failure, Forfeit, MatchResult, Termination
    from referee.series import Played, summary_lines

    lost = Forfeit(1, Failure.ILLEGAL_ACTION, "an action not among the legal ones: [pine-crane, plum-warbler]")
    result = MatchResult("m-0001", 0, (0, 0), 1, Termination.FORFEIT, lost, ("you", "bot"), 5, 3)
    played = Played(result, None)
    assert any("pine-crane" in line for line in summary_lines(played))  # the operator's summary: all of it
    shown = summary_lines(played, person=0)
    assert "  seat 2 (bot) forfeits: illegal_action" in shown and not any("pine-crane" in x for x in shown)


def test_show_plays_the_match_and_as_a_seat_hides_the_rest(replay: Path) -> None:
    full, problem = show(replay)
    assert problem is None
    text = "\n".join(full)
    lines = lines_of(replay)
    start = lines[_first(lines, type="event", event="round_start")]
    assert " ".join(start["hands"][1]) in text  # type: ignore[arg-type]
    assert " ".join(start["stock"]) in text  # type: ignore[arg-type]
    assert "seed 17" in text and "result:" in full[-1]
    for seat in (1, 2):
        seen, problem = show(replay, seat)
        assert problem is None
        text = "\n".join(seen)
        assert " ".join(start["hands"][seat - 1]) in text  # type: ignore[arg-type]
        assert " ".join(start["hands"][2 - seat]) not in text  # type: ignore[arg-type]
        assert " ".join(start["stock"]) not in text  # type: ignore[arg-type]
        assert "seed" not in text
        # the opponent's legal choices (its hand) never appear; its own decisions do
        assert f"seat {3 - seat} play:" not in text and f"seat {seat} play:" in text


def test_show_of_a_forfeit_names_the_reason(tmp_path: Path) -> None:
    path = tmp_path / "f.jsonl"
    broken = str(BOTS / "broken_bot.py") + " invalid_json"
    run_match(
        (FIRST, broken), MatchConfig(PRESETS["guide"], 2, time=TimeControl(move_ms=2000), replay_path=path)
    )
    text, problem = show(path)
    assert problem is None
    assert text[-1].startswith("result: seat 2 (broken-invalid_json) forfeits: invalid_json")


def test_the_reader_gives_typed_records_with_engine_seats(replay: Path) -> None:
    records = [r for _, r in read_replay(replay)]
    header, result = records[0], records[-1]
    assert isinstance(header, Header) and header.seed == 17 and header.rules.name == "koikoi-japan"
    assert isinstance(result, Result) and result.reason in (Termination.ROUNDS, Termination.BROKE)
    hellos = [r for r in records if isinstance(r, Hello)]
    assert [h.seat for h in hellos] == [0, 1] and hellos[1].name == "random"
    decisions = [r for r in records if isinstance(r, Decision)]
    assert {d.seat for d in decisions} == {0, 1} and all(isinstance(d.ms, float) for d in decisions)


def test_a_seed_written_as_a_string_reads_the_same(replay: Path, tmp_path: Path) -> None:
    lines = lines_of(replay)
    lines[0]["seed"] = "17"
    assert verify(write(tmp_path / "s.jsonl", lines)).ok
    for bad in ("17.0", "", "0x11", " 17", "١٧"):  # not plain ASCII decimal digits
        lines[0]["seed"] = bad
        report = verify(write(tmp_path / "s.jsonl", lines))
        assert report.error_line == 1 and "seed" in report.message, bad


def test_a_forfeit_reason_must_be_a_known_failure(replay: Path, tmp_path: Path) -> None:
    lines = lines_of(replay)
    lines[-1].update(reason="forfeit", forfeit={"seat": 1, "reason": "bored", "detail": ""})
    report = verify(write(tmp_path / "f.jsonl", lines))
    assert report.error_line == len(lines) and "unknown forfeit reason" in report.message


EVIL = "\x1b]0;owned\x07\x1b[2J\x9b31m\u202egnp.exe\u2066\x00\r"
UNSAFE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069]")


@pytest.mark.slow
def test_show_and_verify_print_no_escape_sequence_from_a_crafted_replay(tmp_path: Path, referee_exe: Path) -> None:
    lines = replay_lines(names=(EVIL, "b" + EVIL), match_id=EVIL, max_decisions=5)
    lines[0]["rules"]["name"] = EVIL
    state = engine_states(lines)[-1]
    lines.append({"type": "result", "winner": 1, "scores": list(state.scores), "rounds": state.round,
                  "reason": "forfeit", "forfeit": {"seat": 2, "reason": "crash", "detail": EVIL},
                  "bots": [{"seat": 1, "name": EVIL}, {"seat": 2, "name": EVIL}]})  # fmt: skip
    good = write(tmp_path / "evil.jsonl", lines)
    bad = write(tmp_path / "bad.jsonl", [*lines[:4], {"type": EVIL}])
    runs = [subprocess.run([str(referee_exe), "replay", *args], capture_output=True, text=True, timeout=60)
            for args in (["show", str(good)], ["show", "--seat", "2", str(good)], ["show", str(bad)],
                         ["verify", str(good), str(bad)], ["html", str(bad)])]  # fmt: skip
    assert runs[0].returncode == 0 and "forfeits: crash" in runs[0].stdout
    assert "\\x1b]0;owned\\x07" in runs[0].stdout and "\\u202e" in runs[0].stdout  # shown, escaped
    assert runs[2].returncode == 1 and "unknown line type" in runs[2].stderr
    assert runs[3].stdout.count("\n") == 2 and runs[4].returncode == 2
    for run in runs:
        assert "Traceback" not in run.stderr
        assert UNSAFE.search(run.stdout + run.stderr) is None, run.args


@pytest.mark.slow
def test_show_of_a_path_that_is_not_a_replay_file_is_bad_input(tmp_path: Path, referee_exe: Path) -> None:
    # exit 2, as verify and html: 1 is kept for a replay with a line that does not check
    for path, words in ((tmp_path / "missing.jsonl", "not a replay file (no such file)"),
                        (tmp_path, "a folder, not a replay file")):  # fmt: skip
        run = subprocess.run([str(referee_exe), "replay", "show", str(path)], capture_output=True, text=True,
                             timeout=60)  # fmt: skip
        assert run.returncode == 2 and run.stdout == "", run.stderr
        assert run.stderr == f"koikoi-referee: error: {path}: {words}\n"


def test_printable_escapes_every_control_and_bidi_character() -> None:
    every = "".join(map(chr, range(0x2100)))
    clean = printable(every)
    assert UNSAFE.search(clean) is None
    assert printable("seat 1: plain, ünïcode, 花札 ok") == "seat 1: plain, ünïcode, 花札 ok"
    assert printable("\x1b[31m\u202e") == "\\x1b[31m\\u202e"


# --------------------------------------------------------------------------------------------- signatures

KEY = bytes(range(32))


def _signed_copy(replay: Path, out: Path, key: bytes = KEY, lines: list[str] | None = None) -> list[str]:
    """The lines of ``replay`` (or ``lines``) written again through the writer with ``key``; returns them."""
    writer = ReplayWriter(out, key=key)
    for line in replay.read_text(encoding="utf-8").splitlines() if lines is None else lines:
        writer.write_line(line)
    writer.close()
    return out.read_text(encoding="utf-8").splitlines()


def test_a_signed_replay_verifies_with_its_key_and_says_so_without(replay: Path, tmp_path: Path) -> None:
    signed = tmp_path / "s.jsonl"
    lines = _signed_copy(replay, signed)
    assert all(json.loads(x)["mac"] for x in lines)
    report = verify(signed, KEY)
    assert report.ok and report.signed and report.lines == len(lines)
    assert report.summary().endswith("; signature checked)")
    unchecked = verify(signed)
    assert unchecked.ok and unchecked.summary().endswith("; signature not checked: no key)")
    wrong = verify(signed, bytes(32))
    assert wrong.error_line == 1 and "signature does not match" in wrong.message
    unsigned = verify(replay, KEY)  # a key is there: a line without a MAC could be anybody's
    assert unsigned.error_line == 1 and unsigned.message == "the line is not signed"


def _kinds(lines: list[str]) -> list[str]:
    return [json.loads(x)["type"] for x in lines]


@pytest.mark.slow
def test_a_signed_replay_with_crlf_line_ends_verifies_and_a_blank_line_is_named(replay: Path, tmp_path: Path) -> None:
    lines = _signed_copy(replay, tmp_path / "s.jsonl")
    crlf = tmp_path / "crlf.jsonl"
    crlf.write_bytes("".join(f"{line}\r\n" for line in lines).encode("utf-8"))  # a copy through a CRLF system
    report = verify(crlf, KEY)
    assert report.ok and report.signed, report.summary()
    blank = tmp_path / "blank.jsonl"
    blank.write_text("\n".join([*lines[:4], "", *lines[4:]]) + "\n", encoding="utf-8")
    report = verify(blank, KEY)
    assert report.error_line == 5 and report.message == "a blank line (a replay is one JSON object a line)"


def test_a_signed_replay_edited_anywhere_is_rejected_at_that_line(replay: Path, tmp_path: Path) -> None:
    signed = tmp_path / "s.jsonl"
    lines = _signed_copy(replay, signed)
    # Edits the re-simulation cannot see (free fields), on every kind of line; and every line's mac field.
    free = {"header": ("created", "2000-01-01T00:00:00+00:00"), "hello": ("name", "someone else"),
            "decision": ("ms", 0.5), "result": ("bots", [{"seat": 1, "name": "x"}, {"seat": 2, "name": "y"}])}
    kinds = _kinds(lines)
    targets = sorted({kinds.index(k) for k in free} | set(range(0, len(lines), 9)) | {len(lines) - 1})
    edited = tmp_path / "e.jsonl"
    for i in targets:
        obj = json.loads(lines[i])
        if obj["type"] in free:
            key, value = free[obj["type"]]
            obj[key] = value if obj[key] != value else 1.5  # an edit must change the line: a decision may take 0.5 ms
            body = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
            edited.write_text("\n".join([*lines[:i], body, *lines[i + 1 :]]) + "\n", encoding="utf-8")
            assert verify(edited).ok  # the re-simulation alone accepts this edit
            report = verify(edited, KEY)
            assert report.error_line == i + 1 and "signature does not match" in report.message, (i, report)
        other = lines[i].replace(obj["mac"], obj["mac"][::-1])
        edited.write_text("\n".join([*lines[:i], other, *lines[i + 1 :]]) + "\n", encoding="utf-8")
        report = verify(edited, KEY)
        assert report.error_line == i + 1 and "signature does not match" in report.message, (i, report)
    # a line dropped, repeated or moved: rejected where the order changes (by the chain where the
    # re-simulation alone would accept the change)
    hellos = [i for i, k in enumerate(kinds) if k == "hello"]
    for changed, at, resimulation_accepts in (
        ([*lines[:1], *lines[2:]], 2, True),  # the first hello dropped: the second now follows the header
        ([*lines[: hellos[0]], lines[hellos[1]], lines[hellos[0]], *lines[hellos[1] + 1 :]], 2, True),  # swapped
        ([*lines[:5], lines[4], *lines[5:]], 6, False),  # a line repeated
    ):
        edited.write_text("\n".join(changed) + "\n", encoding="utf-8")
        assert verify(edited).ok == resimulation_accepts
        report = verify(edited, KEY)
        assert not report.ok and report.error_line == at, report.summary()
        assert "signature does not match" in report.message or not resimulation_accepts


def test_a_forfeit_appended_to_a_cut_signed_replay_is_rejected(replay: Path, tmp_path: Path) -> None:
    signed = tmp_path / "s.jsonl"
    lines = _signed_copy(replay, signed)
    cut = next(i for i, k in enumerate(_kinds(lines)) if k == "decision" and i > 60)  # before a decision
    # a forfeit the engine accepts at that point: its scores and rounds read back from the verifier's complaint
    forged = {"type": "result", "winner": 1, "scores": [0, 0], "rounds": 0, "reason": "forfeit",
              "forfeit": {"seat": 2, "reason": "timeout", "detail": "no answer in 1000 ms"},
              "bots": [{"seat": 1, "name": "first"}, {"seat": 2, "name": "random"}]}  # fmt: skip
    probe = tmp_path / "probe.jsonl"
    probe.write_text("\n".join([*lines[:cut], json.dumps(forged)]) + "\n", encoding="utf-8")
    message = verify(probe).message  # "result: scores is [0, 0], the engine says [a, b]"
    forged["scores"] = json.loads(message.split("the engine says ")[1])
    probe.write_text("\n".join([*lines[:cut], json.dumps(forged)]) + "\n", encoding="utf-8")
    message = verify(probe).message
    if "rounds" in message:
        forged["rounds"] = int(message.split("the engine says ")[1])
    attempts = {
        "unsigned": json.dumps(forged),
        "a mac made up": json.dumps({**forged, "mac": "0" * 64}),
        "the real result's mac": json.dumps({**forged, "mac": json.loads(lines[-1])["mac"]}),
    }
    for what, line in attempts.items():
        forgery = tmp_path / "forged.jsonl"
        forgery.write_text("\n".join([*lines[:cut], line]) + "\n", encoding="utf-8")
        assert verify(forgery).ok, what  # the re-simulation alone accepts the forged forfeit
        report = verify(forgery, KEY)
        assert not report.ok and report.error_line == cut + 1, (what, report)
        assert "signature does not match" in report.message or "not signed" in report.message
        assert "\n" not in report.summary()


def test_a_writer_stopped_midway_leaves_a_signed_prefix(replay: Path, tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    writer = ReplayWriter(path, key=KEY)
    source = replay.read_text(encoding="utf-8").splitlines()
    for line in source[:50]:
        writer.write_line(line)
        writer.flush()  # the match flushes after each decision's lines: a kill after it leaves them
        report = verify(path, KEY)
        assert report.truncated and report.signed and report.lines == source.index(line) + 1
    raw = path.read_bytes()
    path.write_bytes(raw[:-30])  # killed in the middle of writing a line
    report = verify(path, KEY)
    assert report.truncated and report.lines == 49
    writer.close()


def test_the_writer_creates_its_file_at_the_first_flush_and_encodes_lines_then(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    writer = ReplayWriter(path)
    line = {"type": "hello", "seat": 1, "name": "a", "version": None}
    writer.write(line)
    writer.decision(1, 1, "play", '[{"play":"jan-1"}]', '{"play":"jan-1"}', 1.5)
    assert not path.exists()  # nothing flushed yet: the match flushes while the first bot thinks
    writer.flush()
    assert [json.loads(x) for x in path.read_text().splitlines()] == [
        line,
        {"type": "decision", "seat": 1, "id": 1, "decision": "play", "legal": [{"play": "jan-1"}],
         "action": {"play": "jan-1"}, "ms": 1.5},
    ]  # fmt: skip
    writer.close()
    empty = tmp_path / "empty.jsonl"
    ReplayWriter(empty).close()
    assert empty.read_bytes() == b""  # a replay with no line is still there, empty


def test_a_replay_path_that_cannot_be_created_fails_at_the_first_flush_once(tmp_path: Path) -> None:
    path = tmp_path / "taken.jsonl"
    path.mkdir()
    writer = ReplayWriter(path)
    writer.write_line('{"type":"x"}')
    with pytest.raises(IsADirectoryError):
        writer.flush()
    writer.write_line('{"type":"y"}')
    writer.flush()  # the writer gave up: no second error
    writer.close()


def _cli(*args: str, home: Path, exe: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_DATA_HOME": str(home)}
    return subprocess.run([str(exe), "replay", *args], capture_output=True, text=True, timeout=60, env=env)


@pytest.mark.slow
def test_replay_verify_uses_the_key_file_or_the_default_key(replay: Path, tmp_path: Path, referee_exe: Path) -> None:
    signed = tmp_path / "s.jsonl"
    _signed_copy(replay, signed)
    key_file = tmp_path / "key"
    key_file.write_text(KEY.hex() + "\n")
    home = tmp_path / "data"
    out = _cli("verify", str(signed), home=home, exe=referee_exe)  # no default key: not checked, still ok
    assert out.returncode == 0 and out.stdout.strip().endswith("signature not checked: no key)")
    assert not (home / "koikoi-referee" / "key").exists()  # verify never makes a key
    out = _cli("verify", "--key", str(key_file), str(signed), home=home, exe=referee_exe)
    assert out.returncode == 0 and out.stdout.strip().endswith("signature checked)")
    made = load_key(home / "koikoi-referee" / "key", create=True)  # another key, made as on first use
    assert made is not None and (home / "koikoi-referee" / "key").stat().st_mode & 0o777 == 0o600
    out = _cli("verify", str(signed), home=home, exe=referee_exe)
    assert out.returncode == 1 and out.stdout.startswith(f"{signed}: line 1: the signature does not match")
    out = _cli("verify", "--key", str(tmp_path / "missing"), str(signed), home=home, exe=referee_exe)
    assert out.returncode == 2 and "no such file" in out.stderr and "Traceback" not in out.stderr
    key_file.write_text("not hex\n")
    out = _cli("verify", "--key", str(key_file), str(signed), home=home, exe=referee_exe)
    assert out.returncode == 2 and "is not a signing key" in out.stderr and out.stderr.count("\n") == 1


def test_the_writer_keeps_extra_header_fields_for_the_reader(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    writer = ReplayWriter(path, key=KEY)
    bots = (HeaderBot("a", extra={"sandbox": "none"}), HeaderBot("b", TimeControl(4, 5, 6)))
    written = Header.new("m-1", PRESETS["guide"], 2**60, (), 1, bots, TimeControl(1, 2, 3),
                         {"sandbox": "bwrap", "seed": "no"})  # fmt: skip
    writer.record(written)
    writer.close()
    [(n, header)] = read_replay(path, KEY)
    assert n == 1 and isinstance(header, Header) and header.extra == {"sandbox": "bwrap"}
    assert header.seed == 2**60 and header.first_dealer == 1 and header.commands == ("a", "b")
    assert header.time == TimeControl(1, 2, 3) and header.bots[1].time == TimeControl(4, 5, 6)
    assert header.bots[0].extra == {"sandbox": "none"} and header.bots[0].time is None
    line = json.loads(path.read_text().splitlines()[0])
    del line["mac"]
    assert line == written.to_json() == header.to_json()  # the header read is the header written
    assert list(line)[:2] == ["sandbox", "seed"]  # the extra fields first, as written


@pytest.mark.parametrize("value", [[], {}, ["play"], 1.5, None, True])
def test_a_decision_name_of_any_type_is_a_line_error(replay: Path, tmp_path: Path, value: object) -> None:
    lines = lines_of(replay)
    i = _first(lines, type="decision")
    lines[i]["decision"] = value
    report = verify(write(tmp_path / "d.jsonl", lines))
    assert report.error_line == i + 1 and "unknown decision" in report.message
