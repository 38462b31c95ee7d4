"""The human seat without a terminal: what typed lines mean, card names, the board, and a seat fed by a pipe."""

from __future__ import annotations

import asyncio
import io
import json
import os
import random

import pytest
from rich.console import Console

from referee.engine import CARD_IDS, PRESETS, State, apply, legal_actions, new_match, observe
from referee.match import TimeControl
from referee.protocol import (
    action_json,
    check_action,
    check_hello,
    event_message,
    hello_message,
    view_json,
)
from referee.seats import SeatFailure
from referee.seats.human import (
    HumanSeat,
    Reply,
    human_name,
    interpret_koikoi,
    interpret_play,
    interpret_target,
    is_human,
)
from referee.seats.render import Renderer, card_name
from referee.text import plural

HAND = ["pine-crane", "pine-chaff-1", "plum-warbler", "iris-ribbon"]
LEGAL = [{"play": "pine-crane", "capture": "pine-ribbon"}, {"play": "pine-crane", "capture": "pine-chaff-2"},
         {"play": "pine-chaff-1", "capture": "pine-ribbon"}, {"play": "pine-chaff-1", "capture": "pine-chaff-2"},
         {"play": "iris-ribbon"}]  # fmt: skip


@pytest.mark.parametrize(
    ("card_id", "name"),
    [("pine-crane", "Pine★crane"), ("plum-warbler", "Plum◆warbler"), ("pine-ribbon", "Pine▬poem"),
     ("peony-ribbon", "Peony▬blue"), ("willow-ribbon", "Willow▬red"), ("maple-chaff-2", "Maple·chaff"),
     ("willow-lightning", "Willow·lightning"), ("chrysanthemum-sake", "Chrysanthemum◆sake")],
)  # fmt: skip
def test_card_names_say_month_and_kind(card_id: str, name: str) -> None:
    assert card_name(card_id) == name
    assert card_name(card_id, ascii_only=True).isascii()


def test_every_card_has_a_short_name() -> None:
    assert max(len(card_name(c)) for c in CARD_IDS) == len("Chrysanthemum·chaff")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("4", Reply(action={"play": "iris-ribbon"})),
        ("iris", Reply(action={"play": "iris-ribbon"})),
        ("IRIS-RIB", Reply(action={"play": "iris-ribbon"})),
        ("Iris▬red", Reply(action={"play": "iris-ribbon"})),
        ("1", Reply(card="pine-crane")),
        ("pine-cr", Reply(card="pine-crane")),
        ("1 2", Reply(action={"play": "pine-crane", "capture": "pine-chaff-2"})),
        ("pine-crane pine-r", Reply(action={"play": "pine-crane", "capture": "pine-ribbon"})),
        ("q", Reply(command="quit")),
        ("?", Reply(command="help")),
        ("help", Reply(command="help")),
        ("b", Reply(command="board")),
    ],
)
def test_play_input(text: str, expected: Reply) -> None:
    assert interpret_play(text, HAND, LEGAL) == expected


@pytest.mark.parametrize(
    ("text", "hint"),
    [
        ("", "type the number of a card"),
        ("9", "there is no number 9: choose 1 to 4"),
        ("0", "there is no number 0"),
        ("pine", "'pine' could be pine-crane, pine-chaff-1"),
        ("maple", "no card 'maple' here"),
        ("3", "Plum◆warbler matches no field card and cannot be played now; playable: 1, 2, 4"),
        ("4 1", "Iris▬red has no capture to choose"),
        ("1 3", "there is no number 3: choose 1 to 2"),
        ("1 2 3", "one card, or a card and a capture target"),
    ],
)
def test_play_input_that_is_asked_again(text: str, hint: str) -> None:
    reply = interpret_play(text, HAND, LEGAL)
    assert reply.action is None and reply.hint is not None and hint in reply.hint


def test_target_and_koikoi_input() -> None:
    targets = ["pine-ribbon", "pine-chaff-2"]
    assert interpret_target("2", targets, can_go_back=True) == Reply(action={"capture": "pine-chaff-2"})
    assert interpret_target("pine-r", targets, can_go_back=False) == Reply(action={"capture": "pine-ribbon"})
    assert interpret_target("b", targets, can_go_back=True) == Reply(command="back")
    # b shows the board, as at any prompt, where there is no way back (a drawn card's choice)
    assert interpret_target("b", targets, can_go_back=False) == Reply(command="board")
    assert interpret_target("board", targets, can_go_back=True) == Reply(command="board")
    assert interpret_target("q", targets, can_go_back=False) == Reply(command="quit")
    assert interpret_koikoi(" S ") == Reply(action={"koikoi": False})
    assert interpret_koikoi("koi-koi") == Reply(action={"koikoi": True})
    assert interpret_koikoi("1").hint is not None


def test_seat_specs() -> None:
    assert is_human("human") and is_human("human:ann") and not is_human("humane.py") and not is_human("bots/x.py")
    assert human_name("human") == "human" and human_name("human:ann") == "ann" and human_name("human:") == "human"
    assert human_name("human:a\x1bb") == "ab"


def _random_states(n: int, seed: int) -> list[State]:
    rng = random.Random(seed)
    out: list[State] = []
    for preset in PRESETS.values():
        state = new_match(preset, rng.randrange(1 << 30))
        while not state.is_over and len(out) < n:
            out.append(state)
            state = apply(state, rng.choice(legal_actions(state)))
    return out


def test_the_board_fits_its_width_and_shows_no_hidden_card() -> None:
    for width in (40, 80):
        for state in _random_states(150, width):
            seat = state.to_move
            view = observe(state, seat)
            legal = [action_json(a) for a in view.legal]
            lines = Renderer(seat + 1, width=width).board(view_json(view), legal)
            assert max(line.cell_len for line in lines) <= width
            text = "\n".join(line.plain for line in lines)
            for c in range(48):
                if (state.hands[1 - seat] >> c) & 1 and "chaff" not in CARD_IDS[c]:
                    assert card_name(CARD_IDS[c]) not in text  # names of non-chaff cards are unique
            assert f"Opponent holds {plural(state.hands[1 - seat].bit_count(), 'card')}" in text


def test_a_round_end_explains_points_beyond_its_yaku_and_the_deal_shows_when_the_opponent_leads() -> None:
    r = Renderer(2, width=80)
    end = {"event": "round_end", "round": 3, "winner": 2, "points": 6, "reason": "stop", "koikoi_calls": [0, 1],
           "yaku": [{"name": "chaff", "points": 3}], "scores": [30, 36]}  # fmt: skip
    text = " ".join(line.plain for line in r.event(end))
    assert "you score 6 (stop: chaff 3; 3 made 6 by the koi-koi and doubling rules (koi-koi calls: you 1, " \
           "opponent 0))" in text  # fmt: skip
    plain = {**end, "points": 3, "koikoi_calls": [0, 0]}
    assert "you score 3 (stop: chaff 3)." in " ".join(line.plain for line in r.event(plain))
    start = {"event": "round_start", "round": 2, "dealer": 1, "leader": 1, "hand": ["pine-crane", "iris-bridge"],
             "field": ["maple-deer"]}  # fmt: skip
    text = "\n".join(line.plain for line in r.event(start))
    assert "the opponent plays first" in text
    assert f"Field dealt: {card_name('maple-deer')}" in text and card_name("iris-bridge") in text
    mine = "\n".join(line.plain for line in r.event({**start, "leader": 2}))
    assert "Field dealt" not in mine  # the board comes with the request at once
    assert "(1 pt)" in r.event({"event": "yaku", "seat": 1, "yaku": ["ribbons"], "points": 1})[0].plain


def _pipe_seat(lines: str) -> tuple[HumanSeat, io.StringIO]:
    read, write = os.pipe()
    os.write(write, lines.encode())
    os.close(write)
    out = io.StringIO()
    return HumanSeat("ann", stdin_fd=read, console=Console(file=out, color_system=None, width=80)), out


def test_a_seat_fed_by_a_pipe_answers_legally_and_quits_at_the_end_of_input() -> None:
    state = new_match(PRESETS["guide"], 12)
    seat = state.to_move
    view = observe(state, seat)
    legal = [action_json(a) for a in view.legal]
    human, out = _pipe_seat("nonsense\n99\n?\n" + "\n".join(str(k) for k in range(1, 9)) + "\n")

    async def main() -> tuple[dict[str, object], SeatFailure | None]:
        hello = await human.start(hello_message(seat, PRESETS["guide"], "m-0001", TimeControl()), 1.0)
        assert check_hello(hello).name == "ann"
        await human.send_many([event_message(e, seat) for e in state.events])
        request = human.request(view, 1, 0)  # numbered by the seat
        line, _ = await human.ask(request, 0.001)  # the clock does not apply
        assert check_action(line, request.id, view.legal) in view.legal
        for _ in range(10):  # the lines left answer more requests, then the input ends
            again = human.request(view, 1, 0)
            try:
                line2, _ = await human.ask(again, 0.001)
            except SeatFailure as failure:
                return json.loads(line), failure
            assert check_action(line2, again.id, view.legal) in view.legal
        return json.loads(line), None

    answer, failure = asyncio.run(main())
    assert answer["id"] == 1 and answer["action"] in legal
    text = out.getvalue()
    assert "no card 'nonsense' here" in text and "there is no number 99" in text and "Commands at any prompt" in text
    assert f"you are seat {seat + 1} (ann)" in text
    assert failure is not None and failure.reason == "quit" and failure.detail == "end of input"
    assert human.failed is failure
