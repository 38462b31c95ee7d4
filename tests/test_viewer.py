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
from replay_factory import engine_checkpoints, expected_view, replay_lines, shown, write_replay
from typer.testing import CliRunner

from referee.commands.replay_html import register
from referee.replay.html import ViewerError, build_steps, read_replay, write_html

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


@pytest.mark.parametrize(
    ("rules", "seed"), [("koikoi-japan", 7), ("guide", 3), ("cardavia", 11), ("guide", 20)]
)
def test_steps_match_the_engine(rules: str, seed: int) -> None:
    lines = replay_lines(rules=rules, seed=seed, policy_seed=seed)
    steps = build_steps(lines)["steps"]
    events = [x for x in lines if x["type"] == "event"]
    assert len(steps) == len(events)  # one step per event line; a finished match adds no closing step
    checkpoints = engine_checkpoints(lines)
    assert len(checkpoints) > 10
    for i, state in checkpoints.items():
        assert shown(steps[i]) == expected_view(state), f"step {i}"
    result = lines[-1]
    assert steps[-1]["scores"] == result["scores"]
    assert "Match over" in steps[-1]["text"]


def test_each_step_describes_its_event() -> None:
    lines = replay_lines(seed=7)
    steps = build_steps(lines)["steps"]
    events = [x for x in lines if x["type"] == "event"]
    for step, e in zip(steps, events, strict=True):
        if e["event"] == "play":
            assert step["text"].startswith("alpha plays" if e["seat"] == 1 else "beta plays")
            assert e["card"].replace("-", " ") in step["text"].lower()
        elif e["event"] == "yaku":
            assert "makes" in step["text"] and str(e["points"]) in step["text"]
        elif e["event"] == "round_start":
            assert step["text"].startswith(f"Round {e['round']} dealt")
            assert step["round"] == e["round"]


def test_page_is_one_self_contained_file(tmp_path: Path) -> None:
    replay = tmp_path / "m.replay.jsonl"
    lines = write_replay(replay, seed=7)
    out = tmp_path / "m.html"
    facts = write_html(replay, out)
    assert facts["names"] == ["alpha", "beta"] and facts["result"]["scores"] == lines[-1]["scores"]
    text = out.read_text(encoding="utf-8")
    for m in re.finditer(r"https?://", text):
        assert text[max(0, m.start() - 7) : m.start()] == 'xmlns="', text[m.start() - 40 : m.end() + 40]
    page = _page(out)
    assert page.srcs == [] and page.links == []
    assert "Content-Security-Policy" in text and "default-src 'none'" in text
    assert [a.get("type") for a, _ in page.scripts] == ["application/json", None]
    assert _embedded(out) == build_steps(read_replay(replay), source=str(replay))
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
    steps = build_steps(cut)["steps"]
    assert "truncated" in steps[-1]["text"]
    assert build_steps(cut)["match"]["result"] is None
    lines = replay_lines(seed=5, max_decisions=9)
    lines.append({"type": "result", "winner": 1, "scores": [30, 30], "rounds": 1, "reason": "forfeit",
                  "forfeit": {"seat": 2, "reason": "timeout", "detail": "no answer in 1000 ms"},
                  "bots": [{"seat": 1, "name": "alpha"}, {"seat": 2, "name": "beta"}]})  # fmt: skip
    last = build_steps(lines)["steps"][-1]["text"]
    assert last == "beta (seat 2) forfeits the match: timeout (no answer in 1000 ms)."


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
        ("", "not a koikoi-replay/1 replay"),
        ("not json\n", "1: not a JSON line"),
        ("[1, 2]\n", "1: expected a JSON object"),
        ('{"type": "header", "format": "koikoi-replay/9"}\n', "not a koikoi-replay/1 replay"),
        ('{"type": "header", "format": "koikoi-replay/1"}\n', "header: no rules"),
        (_dump(_good()[:3]), "holds no event"),
        (_with_event({"card": "pine-dragon"}, "play"), "unknown card id 'pine-dragon'"),
        (_with_event({"seat": 7}, "play"), "seat: expected 1 or 2"),
        (_with_event({"stock": "abc"}, "round_start"), "stock: expected a list of card ids"),
        (_with_event({"event": "teleport"}, "play"), "unknown event 'teleport'"),
        (_with_event({"captured": ["pine-crane"]}, "play"), "does not fit the field"),
        (_with_event({"hands": [[], []]}, "round_start"), "is not in the hand of seat"),
        (_with_event({"card": None}, "draw"), "unknown card id 'None'"),
        (_dump([{**_good()[0], "rules": {"rounds": "many"}}, *_good()[1:]]), "header: rules"),
        (_dump([*_good(), {"type": "event", "event": "round_end"}]), "malformed round_end event"),
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
    lines = read_replay(tmp_path / "replays" / "m-0001.jsonl")
    a, b = lines[-1]["scores"]
    assert f"{a}–{b}" in text
    assert "standings" not in text


def test_a_replay_from_the_match_runner(tmp_path: Path, referee_exe: Path) -> None:
    replay = tmp_path / "real.jsonl"
    bot = str(Path(__file__).resolve().parent.parent / "bots" / "random_bot.py")
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
    lines = read_replay(replay)
    data = _embedded(tmp_path / "real.html")
    for i, state in engine_checkpoints(lines).items():
        assert shown(data["steps"][i]) == expected_view(state), f"step {i}"
    assert data["match"]["result"]["scores"] == lines[-1]["scores"]
