"""``koikoi-referee play human BOT`` in a real terminal (pexpect): a person plays a bot, quits, is interrupted."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import uuid
from pathlib import Path

import pexpect
import pytest

from referee.engine import CARD_IDS, Deal, State, apply, legal_actions, load_rules, new_match
from referee.engine.views import DECISIONS
from referee.protocol import action_json
from referee.seats.render import card_name
from tests.helpers import BROKEN, ROOT

pytestmark = pytest.mark.slow  # real processes: left out by make test-fast

A = r"(?:\x1b\[[\d;]*m)*"  # any colour escapes
PLAY = r"Your move: card number or id \(\? for help\) > "
TAKE = r"Take 1 or 2(?: \(b: back\))? > "
KOIKOI = r"Stop or koi-koi\? \[s/k\] > "
PLAYABLE = r"playable:(?:\s|\x1b\[[\d;]*m)*(\d+)"
ESCAPE = re.compile(r"\x1b\[[\d;?]*[A-Za-z]")

# The person (seat 1) holds the cherry curtain and the sake cup; the field holds a cherry and a chrysanthemum and
# two pine cards for the crane; the bot holds no pine, cherry or chrysanthemum, and the stock has them last.
HUMAN_HAND = ["cherry-curtain", "chrysanthemum-sake", "pine-crane", "plum-warbler", "clover-boar", "pampas-moon",
              "maple-deer", "willow-swallow"]  # fmt: skip
BOT_HAND = ["wisteria-cuckoo", "iris-bridge", "peony-butterfly", "clover-ribbon", "pampas-geese", "maple-ribbon",
            "willow-rainman", "paulownia-phoenix"]  # fmt: skip
FIELD = ["cherry-chaff-1", "chrysanthemum-chaff-1", "pine-ribbon", "pine-chaff-1", "plum-chaff-1",
         "wisteria-chaff-1", "iris-chaff-1", "peony-chaff-1"]  # fmt: skip
LAST = ["pine-chaff-2", "cherry-ribbon", "cherry-chaff-2", "chrysanthemum-ribbon", "chrysanthemum-chaff-2"]
STOCK = [c for c in CARD_IDS if c not in {*HUMAN_HAND, *BOT_HAND, *FIELD, *LAST}] + LAST
DEAL = {"hands": [HUMAN_HAND, BOT_HAND], "field": FIELD, "stock": STOCK}
# The person's first decisions: curtain takes the cherry, sake takes the chrysanthemum (cherry viewing), koi-koi,
# then the crane, which matches both pine cards.
SCRIPT = [({"play": "cherry-curtain"}, "play"), ({"play": "chrysanthemum-sake"}, "play"),
          ({"koikoi": True}, "koikoi"), ({"play": "pine-crane", "capture": "pine-ribbon"}, "play")]  # fmt: skip


def test_the_prepared_deal_gives_the_person_cherry_viewing_whatever_the_bot_does() -> None:
    rules = dataclasses.replace(load_rules("guide"), rounds=1)
    paths = 0

    def walk(state: State, k: int) -> None:
        nonlocal paths
        while k < len(SCRIPT):
            assert not state.is_over
            legal = legal_actions(state)
            if state.to_move == 1:  # every choice of the bot
                for a in legal:
                    walk(apply(state, a), k)
                return
            want, decision = SCRIPT[k]
            wire = [action_json(a) for a in legal]
            assert DECISIONS[state.phase] == decision and want in wire, (k, wire)
            if "capture" in want:
                assert sorted(w["capture"] for w in wire if w.get("play") == "pine-crane") == [
                    "pine-chaff-1", "pine-ribbon"]  # fmt: skip
            state = apply(state, legal[wire.index(want)])
            k += 1
        paths += 1

    start = new_match(rules, 1, (Deal.from_json(DEAL),), None)
    assert [type(e).__name__ for e in start.events] == ["RoundStart"]
    walk(start, 0)
    assert paths > 1


def spawn(exe: Path, args: list[str], *, env: dict[str, str] | None = None, cols: int = 80) -> pexpect.spawn:
    full = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    full.update(env or {}, TERM="xterm-256color")
    return pexpect.spawn(str(exe), args, cwd=str(ROOT), encoding="utf-8", timeout=30, dimensions=(40, cols),
                         env=full)  # fmt: skip


def bot_pids(marker: str) -> list[int]:
    """Processes whose command line holds ``marker`` (the bot's --name)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


def verify(exe: Path, replay: Path) -> str:
    out = subprocess.run([str(exe), "replay", "verify", str(replay)], capture_output=True, text=True, timeout=60)
    return out.stdout + out.stderr


def finish_round(child: pexpect.spawn) -> None:
    """Play on (the first playable card, the first target, stop) until the match is over."""
    prompts = [PLAY, TAKE, KOIKOI, "Match over"]
    i = child.expect(prompts)
    while i != 3:
        child.sendline("s" if i == 2 else "1")
        j = child.expect([PLAYABLE, *prompts]) if i == 0 else 1 + child.expect(prompts)
        if j == 0:  # card 1 cannot be played: take the first playable one
            number = child.match.group(1)
            child.expect(PLAY)
            child.sendline(number)
            j = 1 + child.expect(prompts)
        i = j - 1


def test_a_whole_round_in_colour_at_80_columns(referee_exe: Path, tmp_path: Path) -> None:
    deals, replay = tmp_path / "deal.jsonl", tmp_path / "game.jsonl"
    deals.write_text(json.dumps(DEAL) + "\n")
    marker = f"bot-{uuid.uuid4().hex[:12]}"
    child = spawn(referee_exe, ["play", "human", f"bots/random_bot.py --seed 7 --name {marker}", "--seed", "5",
                                "--rules", "guide", "--rounds", "1", "--deals", str(deals), "--replay",
                                str(replay)])  # fmt: skip
    child.logfile_read = log = _Log()
    child.expect(r"rules guide  1 round  1 game\r?\n")
    child.expect("you are seat 1 \\(human\\)")
    child.expect(PLAY)
    seen_before_first_move = log.text
    child.sendline("help")
    child.expect("Commands at any prompt")
    child.expect(PLAY)
    child.sendline("xyz")
    child.expect("no card 'xyz' here")
    child.expect(PLAY)
    child.sendline("99")
    child.expect("there is no number 99")
    child.expect(PLAY)
    child.sendline("cherry-c")  # a unique beginning of an id
    child.expect(f"You play {A}Cherry★curtain{A} and take {A}Cherry·chaff")
    child.expect(PLAY)
    child.sendline("5")  # the sake cup, fifth in the sorted hand once the curtain is gone
    child.expect(f"You play {A}Chrysanthemum◆sake{A} and take {A}Chrysanthemum·chaff")
    child.expect(r"You have yaku: cherry viewing \(5 pts\)")
    child.expect(r"You have yaku worth 5 pts")
    child.expect(KOIKOI)
    child.sendline("maybe")
    child.expect("type s to stop and score now, or k to call koi-koi")
    child.expect(KOIKOI)
    child.sendline("k")
    child.expect(r"You call koi-koi! \(call 1\)")
    child.expect(PLAY)
    child.sendline("1")  # the crane matches two pine cards
    child.expect(f"You play {A}Pine★crane{A}: it matches two field cards. Take which?")
    child.expect(TAKE)
    child.sendline("zz")
    child.expect("no card 'zz' here")
    child.expect(TAKE)
    child.sendline("b")
    child.expect(PLAY)
    child.sendline("pine-crane")
    child.expect(TAKE)
    child.sendline("pine-r")
    child.expect(f"You play {A}Pine★crane{A} and take {A}Pine▬poem")
    finish_round(child)
    child.expect(r"result: ")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert "ok (" in verify(referee_exe, replay) and "truncated" not in verify(referee_exe, replay)
    decisions = [json.loads(x) for x in replay.read_text().splitlines() if '"decision"' in x]
    mine = [d["action"] for d in decisions if d["seat"] == 1][:4]
    assert mine == [want for want, _ in SCRIPT]
    assert bot_pids(marker) == []
    # only what seat 1 may see: none of the bot's cards but the one it played first, and no seed before the end
    plain = ESCAPE.sub("", seen_before_first_move)
    played = re.search(r"Opponent plays (\S+?) ", plain)
    assert played is not None
    hidden = [card_name(c) for c in BOT_HAND if card_name(c) != played.group(1)]
    assert len(hidden) == 7 and not any(name in plain for name in hidden)
    assert "seed" not in ESCAPE.sub("", log.text).split("Match over")[0]
    assert "\x1b[" in log.text  # colour on a terminal
    screen = ESCAPE.sub("", log.text).split("\nm-0001  seed 5")[0]  # the play, before the summary
    assert "Match over" in screen and "Your hand:" in screen
    wide = [line for line in screen.split("\r\n") if len(line) > 80]
    assert wide == []


class _Log:
    """Collects what the terminal showed."""

    def __init__(self) -> None:
        self.text = ""

    def write(self, data: str) -> None:
        self.text += data

    def flush(self) -> None:
        pass


def test_quit_with_q_as_seat_2_without_colour(referee_exe: Path, tmp_path: Path) -> None:
    replay = tmp_path / "q.jsonl"
    marker = f"bot-{uuid.uuid4().hex[:12]}"
    child = spawn(referee_exe, ["play", f"bots/greedy_bot.py --name {marker}", "human:alice", "--seed", "11",
                                "--rules", "cardavia", "--replay", str(replay)], env={"NO_COLOR": "1"})  # fmt: skip
    child.logfile_read = log = _Log()
    child.expect("you are seat 2 \\(alice\\)")
    child.expect([PLAY, TAKE, KOIKOI])
    child.sendline("?")
    child.expect("Commands at any prompt")
    child.expect([PLAY, TAKE, KOIKOI])
    child.sendline("q")
    child.expect(r"You quit \(typed q\): the match ends as your forfeit")
    child.expect(r"seat 2 \(alice\) forfeits: quit: the player typed q")
    child.expect(r"result: seat 2 \(alice\) forfeits \(quit\): seat 1 \(.*\) wins")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert "ok (" in verify(referee_exe, replay)
    result = json.loads(replay.read_text().splitlines()[-1])
    assert result["type"] == "result" and result["forfeit"]["reason"] == "quit" and result["winner"] == 1
    assert result["bots"][1]["name"] == "alice"
    assert bot_pids(marker) == []
    assert "\x1b" not in log.text and "Your hand:" in log.text and "Field (" in log.text


def test_ctrl_c_at_a_prompt_ends_the_match_as_a_forfeit(referee_exe: Path, tmp_path: Path) -> None:
    replay = tmp_path / "c.jsonl"
    marker = f"bot-{uuid.uuid4().hex[:12]}"
    child = spawn(referee_exe, ["play", "human", f"bots/random_bot.py --name {marker}", "--seed", "3", "--replay",
                                str(replay)])  # fmt: skip
    child.expect(PLAY)
    assert bot_pids(marker) != []
    child.sendintr()
    child.expect(r"You quit \(pressed Ctrl-C\)")
    child.expect(r"seat 1 \(human\) forfeits: quit: the player pressed Ctrl-C")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert "ok (" in verify(referee_exe, replay)
    assert json.loads(replay.read_text().splitlines()[-1])["forfeit"]["seat"] == 1
    assert bot_pids(marker) == []


def test_ctrl_c_twice_while_the_bot_thinks_keeps_a_truncated_replay(referee_exe: Path, tmp_path: Path) -> None:
    replay = tmp_path / "t.jsonl"
    marker = f"bot-{uuid.uuid4().hex[:12]}"
    # the bot answers its first request, then hangs (with a long clock); the person plays first
    child = spawn(referee_exe, ["play", "human", f"{BROKEN} hang {marker}", "--first-dealer", "2", "--seed", "2",
                                "--move-ms", "600000", "--replay", str(replay)])  # fmt: skip
    for _ in range(2):
        child.expect(PLAY)
        child.sendline("1")
        if child.expect([PLAYABLE, r"You draw "]) == 0:
            number = child.match.group(1)
            child.expect(PLAY)
            child.sendline(number)
            child.expect(r"You draw ")
    child.sendintr()
    child.expect(r"Ctrl-C: you quit once the opponent has moved")
    child.sendintr()
    child.expect(r"interrupted; every bot was stopped")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130
    text = verify(referee_exe, replay)
    assert "truncated" in text, text
    assert bot_pids(marker) == []


def test_end_of_input_is_a_quit_and_plain_text_off_a_terminal(referee_exe: Path, tmp_path: Path) -> None:
    replay = tmp_path / "e.jsonl"
    out = subprocess.run(
        [str(referee_exe), "play", "bots/random_bot.py", "human", "--seed", "4", "--replay", str(replay)],
        cwd=ROOT, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "seat 2 (human) forfeits: quit: end of input" in out.stdout
    assert "\x1b" not in out.stdout and "Your hand:" in out.stdout
    assert "ok (" in verify(referee_exe, replay)


def test_help_names_the_human_seat_and_both_humans_are_refused(referee_exe: Path) -> None:
    out = subprocess.run([str(referee_exe), "play", "--help"], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "COLUMNS": "200"})  # fmt: skip
    assert "human[:NAME]" in out.stdout and "time control applies to bots only" in out.stdout
    both = subprocess.run([str(referee_exe), "play", "human", "human:b"], capture_output=True, text=True, timeout=60)
    assert both.returncode == 2 and "only one seat can be human" in both.stderr


def test_board_lines_fit_80_columns_without_colour(referee_exe: Path) -> None:
    cols = 80
    child = spawn(referee_exe, ["play", "human", "bots/random_bot.py", "--seed", "21", "--rules", "koikoi-japan"],
                  env={"NO_COLOR": "1"}, cols=cols)  # fmt: skip
    child.logfile_read = log = _Log()
    child.expect(PLAY)
    child.sendline("b")
    child.expect(PLAY)
    child.sendline("q")
    child.expect(pexpect.EOF)
    child.close()
    lines = log.text.split("\r\n")
    assert any(line.startswith("Your hand:") for line in lines)
    # every line but the one that names the bots' log files, whose length is that of the temporary folder's path
    board = [line for line in lines if not line.lstrip().startswith("stderr:")]
    assert len(board) == len(lines) - 1
    assert max(len(line) for line in board) <= cols
