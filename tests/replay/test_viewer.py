"""The HTML replay viewer without a browser: the steps it builds, the page it writes, the index, bad input."""

from __future__ import annotations

import json
import re
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from referee.commands.replay_html import register
from referee.engine import CARD_IDS, PRESETS, Phase, ids_of
from referee.match import MatchConfig, TimeControl, run_match
from referee.replay.html import ViewerError, build_steps, write_html
from tests.helpers import BROKEN, FIRST, ROOT
from tests.replay_factory import engine_states, expected_view, replay_lines, shown, write_replay

EVIL = '</script><script>alert("x")</script><!--'


class _Page(HTMLParser):
    """Collects the scripts, links and attributes of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self.links: list[str] = []
        self.srcs: list[str] = []
        self._in_script: dict[str, str | None] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "script":
            self._in_script = a
            self.scripts.append((a, ""))
        if tag == "a" and a.get("href"):
            self.links.append(str(a["href"]))
        if "src" in a or (tag == "link"):
            self.srcs.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = None

    def handle_data(self, data: str) -> None:
        if self._in_script is not None:
            attrs, text = self.scripts[-1]
            self.scripts[-1] = (attrs, text + data)


def _page(path: Path) -> _Page:
    p = _Page()
    p.feed(path.read_text(encoding="utf-8"))
    return p


def _embedded(path: Path) -> Any:
    data = [text for attrs, text in _page(path).scripts if attrs.get("type") == "application/json"]
    assert len(data) == 1
    return json.loads(data[0])


def _steps_of(tmp_path: Path, lines: list[dict[str, Any]], seat: int | None = None) -> list[dict[str, Any]]:
    path = tmp_path / "r.jsonl"
    path.write_text(_dump(lines), encoding="utf-8")
    steps: list[dict[str, Any]] = build_steps(path, seat)["steps"]
    return steps


@pytest.mark.parametrize(("rules", "seed"), [("koikoi-japan", 7), ("guide", 3), ("cardavia", 11), ("guide", 20)])
def test_steps_are_the_engine_positions_for_each_view(rules: str, seed: int, tmp_path: Path) -> None:
    lines = replay_lines(rules=rules, seed=seed, policy_seed=seed)
    states = engine_states(lines)
    assert len(states) > 10
    for seat in (None, 0, 1):
        steps = _steps_of(tmp_path, lines, None if seat is None else seat + 1)
        assert len(steps) == len(states)  # the deal, then one step per decision; a finished match adds none
        for i, state in enumerate(states):
            assert shown(steps[i]) == expected_view(state, seat), f"step {i} as {seat}"
        assert steps[-1]["scores"] == lines[-1]["scores"] and "Match over" in steps[-1]["text"]


def test_each_step_tells_the_decision_that_led_to_it(tmp_path: Path) -> None:
    lines = replay_lines(seed=7)
    steps = _steps_of(tmp_path, lines)
    assert steps[0]["text"].startswith("Round 1 dealt: ")
    decisions = [x for x in lines if x["type"] == "decision"]
    for step, d in zip(steps[1:], decisions, strict=True):
        me = "alpha" if d["seat"] == 1 else "beta"
        action = d["action"]
        assert step["actor"] == d["seat"] and step["text"].startswith(me)
        if "play" in action:
            words = action["play"].replace("-", " ").capitalize()
            assert f"{me} plays {words}" in step["text"]
        elif "koikoi" in action:
            assert ("calls koi-koi" if action["koikoi"] else "stops") in step["text"]
        else:
            assert " takes " in step["text"]


def test_page_is_one_self_contained_file(tmp_path: Path) -> None:
    replay = tmp_path / "m.replay.jsonl"
    lines = write_replay(replay, seed=7)
    out = tmp_path / "m.html"
    facts = write_html(replay, out)
    assert facts["names"] == ["alpha", "beta"] and facts["result"]["scores"] == lines[-1]["scores"]
    text = out.read_text(encoding="utf-8")
    for m in re.finditer(r"https?://", text):  # only namespace names: in an xmlns attribute, or the card pictures'
        namespace = text[max(0, m.start() - 7) : m.start()] == 'xmlns="'
        svg_ns = text[m.start() - 10 : m.start() + 27] == 'SVG_NS = "http://www.w3.org/2000/svg"'
        assert namespace or svg_ns, text[m.start() - 40 : m.end() + 40]
    page = _page(out)
    assert page.srcs == [] and page.links == []
    assert "Content-Security-Policy" in text and "default-src 'none'" in text
    assert [a.get("type") for a, _ in page.scripts] == ["application/json", None]
    assert _embedded(out) == build_steps(replay)
    assert sorted(tmp_path.iterdir()) == [out, replay]


def test_a_bot_name_cannot_break_out_of_the_page(tmp_path: Path) -> None:
    replay = tmp_path / "evil.replay.jsonl"
    write_replay(replay, names=(EVIL, "b\u2028<b>&amp;"), match_id="<img src=x onerror=alert(1)>")
    out = tmp_path / "evil.html"
    write_html(replay, out)
    text = out.read_text(encoding="utf-8")
    assert text.count("</script") == 2  # the page's own two script elements
    assert "<script>alert" not in text and "<img" not in text
    page = _page(out)
    assert len(page.scripts) == 2 and page.srcs == []
    assert "\u2028" not in page.scripts[0][1] and "<" not in page.scripts[0][1]
    data = _embedded(out)
    assert data["match"]["names"] == [EVIL, "b\u2028<b>&amp;"]
    assert any(EVIL in step["text"] for step in data["steps"])


def test_seat_option_opens_the_page_from_one_side(tmp_path: Path) -> None:
    replay = tmp_path / "m.replay.jsonl"
    write_replay(replay)
    write_html(replay, tmp_path / "all.html")
    write_html(replay, tmp_path / "two.html", seat=2)
    assert '<body data-seat-view="all">' in (tmp_path / "all.html").read_text(encoding="utf-8")
    assert '<body data-seat-view="2">' in (tmp_path / "two.html").read_text(encoding="utf-8")


def test_truncated_and_forfeited_replays_say_so(tmp_path: Path) -> None:
    cut = replay_lines(seed=5, max_decisions=9)
    assert all(x["type"] != "result" for x in cut)
    steps = _steps_of(tmp_path, cut)
    assert len(steps) == 11 and "truncated" in steps[-1]["text"]
    path = tmp_path / "r.jsonl"
    assert build_steps(path)["match"]["result"] is None
    lines = replay_lines(seed=5, max_decisions=9)
    state = engine_states(lines)[-1]
    lines.append({"type": "result", "winner": 1, "scores": list(state.scores), "rounds": state.round,
                  "reason": "forfeit", "forfeit": {"seat": 2, "reason": "timeout", "detail": "no answer in 1000 ms"},
                  "bots": [{"seat": 1, "name": "alpha"}, {"seat": 2, "name": "beta"}]})  # fmt: skip
    assert _steps_of(tmp_path, lines)[-1]["text"] == "beta (seat 2) forfeits the match: timeout (no answer in 1000 ms)."
    # the forfeit's detail may name the forfeiting seat's hand (its legal actions): a seat's page omits it
    for seat in (1, 2):
        assert _steps_of(tmp_path, lines, seat)[-1]["text"] == "beta (seat 2) forfeits the match: timeout."


def _lines(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "bad.replay.jsonl"
    p.write_text(text, encoding="utf-8")
    return p


def _good() -> list[dict[str, Any]]:
    return replay_lines(seed=7, max_decisions=4)


def _dump(lines: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(x) + "\n" for x in lines)


def _with_event(change: dict[str, Any], which: str) -> str:
    lines = _good()
    for line in lines:
        if line.get("event") == which:
            line.update(change)
            break
    return _dump(lines)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no header line"),
        ("not json\n", "line 1: not a JSON line"),
        ("[1, 2]\n", "line 1: not a JSON object"),
        ('{"type": "header", "format": "koikoi-replay/9"}\n', "line 1: header: format"),
        ('{"type": "header", "format": "koikoi-replay/1", "seed": 1}\n', "line 1: header: rules is not an object"),
        (_dump(_good()[:3]), "holds no event"),
        (_with_event({"card": "pine-dragon"}, "play"), "event differs from the engine: card"),
        (_with_event({"seat": 7}, "play"), "event differs from the engine: seat"),
        (_with_event({"seat": True}, "play"), "event differs from the engine: seat"),
        (_with_event({"stock": "abc"}, "round_start"), "event differs from the engine: stock"),
        (_with_event({"event": "teleport"}, "play"), "event differs from the engine: event"),
        (_with_event({"captured": ["pine-crane"]}, "play"), "event differs from the engine: captured"),
        (_with_event({"hands": [[], []]}, "round_start"), "event differs from the engine: hands"),
        (_dump([{**_good()[0], "rules": {"rounds": "many"}}, *_good()[1:]]), "line 1: header rules"),
        (_dump([*_good(), {"type": "event", "event": "round_end"}]), "an event line where the engine has no event"),
        (_dump([*_good()[:3], {**_good()[3], "seat": 1}]), "line 4: event differs from the engine: seat: unexpected"),
    ],
)
def test_bad_replays_give_a_one_line_error(tmp_path: Path, text: str, message: str) -> None:
    path = _lines(tmp_path, text)
    with pytest.raises(ViewerError) as err:
        write_html(path, tmp_path / "out.html")
    assert message in str(err.value)
    assert "\n" not in str(err.value)
    assert not (tmp_path / "out.html").exists()


def _cli() -> typer.Typer:
    app = typer.Typer()
    replay_app = typer.Typer()
    register(replay_app)
    app.add_typer(replay_app, name="replay")
    return app


def test_cli_writes_a_page_and_reports_bad_input(tmp_path: Path) -> None:
    replay = tmp_path / "m.replay.jsonl"
    write_replay(replay)
    runner = CliRunner()
    ok = runner.invoke(_cli(), ["replay", "html", str(replay), "-o", str(tmp_path / "x.html")])
    assert ok.exit_code == 0, ok.output
    assert (tmp_path / "x.html").is_file()
    ok = runner.invoke(_cli(), ["replay", "html", str(replay)])
    assert ok.exit_code == 0 and (tmp_path / "m.replay.html").is_file()
    bad = _lines(tmp_path, "{oops\n")
    res = runner.invoke(_cli(), ["replay", "html", str(bad)])
    assert res.exit_code == 2
    assert (
        res.output.strip().count("\n") == 0
        and "not a JSON line" in res.output
        and "Traceback" not in res.output
    )
    res = runner.invoke(_cli(), ["replay", "html", str(tmp_path / "missing.jsonl")])
    assert res.exit_code == 2 and "no such file or folder" in res.output


def test_a_folder_s_pages_are_never_written_for_a_seat(tmp_path: Path) -> None:
    # a folder's pages show every card: --seat there is refused before any page is written, not ignored
    write_replay(tmp_path / "m-0001.jsonl", seed=1, match_id="m-0001")
    runner = CliRunner()
    for seat in ("1", "2"):
        res = runner.invoke(_cli(), ["replay", "html", str(tmp_path), "--seat", seat])
        assert res.exit_code == 2 and "--seat applies to a replay file" in res.output, res.output
        assert res.output.strip().count("\n") == 0 and "Traceback" not in res.output
        assert sorted(p.name for p in tmp_path.iterdir()) == ["m-0001.jsonl"]
    res = runner.invoke(_cli(), ["replay", "html", str(tmp_path / "m-0001.jsonl"), "--seat", "1"])
    assert res.exit_code == 0 and '<body data-seat-view="1">' in (tmp_path / "m-0001.html").read_text("utf-8")
    assert _embedded(tmp_path / "m-0001.html")["match"]["seed"] is None


def test_index_links_every_match(tmp_path: Path) -> None:
    write_replay(tmp_path / "replays" / "m-0001.jsonl", seed=1, match_id="m-0001")
    write_replay(tmp_path / "replays" / "m 0002.jsonl", seed=2, match_id="m-0002", names=("gamma", "delta"))
    write_replay(tmp_path / "m-0003.jsonl", seed=3, match_id="m-0003", max_decisions=5)
    (tmp_path / "broken.jsonl").write_text('{"type": "header", "format": "koikoi-replay/1"}\n{"type"\n')
    (tmp_path / "standings.jsonl").write_text('{"engine": "x"}\n')
    result = CliRunner().invoke(_cli(), ["replay", "html", str(tmp_path)])
    assert result.exit_code == 0, result.output
    index = tmp_path / "index.html"
    page = _page(index)
    assert sorted(page.links) == ["m-0003.html", "replays/m%200002.html", "replays/m-0001.html"]
    for link in page.links:
        assert (tmp_path / link.replace("%20", " ")).is_file()
    text = index.read_text(encoding="utf-8")
    for expected in (
        "m-0001",
        "m-0002",
        "m-0003",
        "gamma",
        "delta",
        "unfinished",
        "cannot show",
        "broken.jsonl",
    ):
        assert expected in text
    lines = [json.loads(x) for x in (tmp_path / "replays" / "m-0001.jsonl").read_text().splitlines()]
    a, b = lines[-1]["scores"]
    assert f"{a}–{b}" in text
    assert "standings" not in text


@pytest.mark.slow
def test_a_replay_from_the_match_runner(tmp_path: Path, referee_exe: Path) -> None:
    replay = tmp_path / "real.jsonl"
    bot = str(ROOT / "bots" / "random_bot.py")
    played = subprocess.run(
        [str(referee_exe), "play", f"{bot} --seed 1", f"{bot} --seed 2", "--rules", "cardavia", "--seed", "9",
         "--replay", str(replay)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert played.returncode == 0, played.stderr
    made = subprocess.run(
        [str(referee_exe), "replay", "html", str(replay), "-o", str(tmp_path / "real.html")],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    lines = [json.loads(x) for x in replay.read_text().splitlines()]
    data = _embedded(tmp_path / "real.html")
    states = engine_states(lines)
    assert len(data["steps"]) == len(states)
    for i, state in enumerate(states):
        assert shown(data["steps"][i]) == expected_view(state), f"step {i}"
    assert data["match"]["result"]["scores"] == lines[-1]["scores"]


BIG_SEED = 2**53 + 20_211  # JavaScript would round it; its digits are distinctive enough to search a page for


def _event_cards(e: dict[str, Any], seat: int) -> set[str]:
    """The cards ``seat`` (0/1) was told about in an event line (what the protocol's visible event holds)."""
    kind = e["event"]
    if kind == "round_start":
        return {*e["hands"][seat], *e["field"]}
    if kind == "misdeal":
        return set(e["field"])
    if kind in ("play", "draw", "draw_capture"):
        return {e["card"], *e["captured"]}
    return set()


def _seen_at_each_step(lines: list[dict[str, Any]], seat: int) -> list[set[str]]:
    """For each viewer step: the cards ``seat`` could see in that position (its hand, the field, both capture
    piles, a drawn card) and in the events it was sent on the way there. Computed from the engine state and the
    replay's lines, independently of the viewer."""
    groups: list[set[str]] = [set()]
    for x in lines:
        if x["type"] == "decision":
            groups.append(set())
        elif x["type"] == "event":
            groups[-1] |= _event_cards(x, seat)
    seen = []
    for state, told in zip(engine_states(lines), groups, strict=True):
        cards = {*ids_of(state.hands[seat]), *ids_of(state.field), *ids_of(state.captured[0])}
        cards |= {*ids_of(state.captured[1]), *told}
        if state.phase is Phase.DRAW_CHOICE:
            cards.add(CARD_IDS[state.pending])
        seen.append(cards)
    return seen


def _forfeit_replay(tmp_path: Path) -> Path:
    """A real match where seat 2 answers with an illegal action: the forfeit's detail lists its legal plays
    (with this seed its second request is a play, so the list is its hand)."""
    path = tmp_path / "forfeit.jsonl"
    config = MatchConfig(PRESETS["koikoi-japan"], BIG_SEED + 1, time=TimeControl(move_ms=5000), replay_path=path)
    result = run_match((FIRST, f"{BROKEN} illegal"), config)
    assert result.forfeit is not None and result.forfeit.reason == "illegal_action"
    assert 'legal actions [{"play"' in result.forfeit.detail
    return path


@pytest.mark.parametrize("source", ["koikoi-japan", "guide", "cardavia", "truncated", "forfeit"])
def test_a_seat_page_holds_no_card_that_seat_had_not_seen(source: str, tmp_path: Path) -> None:
    if source == "forfeit":
        replay = _forfeit_replay(tmp_path)
    elif source == "truncated":
        replay = tmp_path / "m.jsonl"
        write_replay(replay, seed=BIG_SEED, max_decisions=6)
    else:
        replay = tmp_path / "m.jsonl"
        write_replay(replay, rules=source, seed=BIG_SEED, policy_seed=3)
    lines = [json.loads(x) for x in replay.read_text(encoding="utf-8").splitlines()]
    for seat in (1, 2):
        out = tmp_path / f"seat{seat}.html"
        write_html(replay, out, seat=seat)
        page = out.read_text(encoding="utf-8")
        steps = _embedded(out)["steps"]
        seen = _seen_at_each_step(lines, seat - 1)
        if source in ("forfeit", "truncated"):
            seen.append(seen[-1])  # the closing step says how the replay ends, on the last position
        assert len(steps) == len(seen)
        for k, (step, cards) in enumerate(zip(steps, seen, strict=True)):
            assert step["hands"][2 - seat] is None and step["next"] is None
            shown_ids = [*step["field"], *step["captured"][0], *step["captured"][1], *step["hands"][seat - 1],
                         *step["marked"], *([step["drawn"]] if step["drawn"] else [])]  # fmt: skip
            assert set(shown_ids) <= cards  # every card the page draws is an id seat could see
            blob = json.dumps(step, ensure_ascii=False).lower()
            for cid in set(CARD_IDS) - cards:  # nor is any other card named, by id or in words
                assert cid not in blob and cid.replace("-", " ") not in blob, (seat, k, cid)
        never = set(CARD_IDS) - set().union(*seen)
        assert never or source not in ("forfeit", "truncated"), "a short match leaves cards the seat never saw"
        text = page.lower()
        for cid in never:
            assert cid not in text and cid.replace("-", " ") not in text, (seat, cid)
        assert str(lines[0]["seed"]) not in page  # the seed fixes every deal: a seat never learns it
    full = tmp_path / "all.html"
    write_html(replay, full)
    data = _embedded(full)
    assert data["match"]["seed"] == str(lines[0]["seed"]) and lines[0]["seed"] > 2**53  # exact for JavaScript
    assert all(step["hands"][0] is not None and step["hands"][1] is not None for step in data["steps"])
