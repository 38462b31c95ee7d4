"""The numeric observation of one seat, built only from :func:`referee.engine.observe` (or the same view on the
wire): never from the state, so it cannot hold the opponent's hand or the stock order.

The observation is a ``float32`` vector of :data:`OBS_SIZE` numbers, from the observing seat's side ("mine"
first, then the opponent's). Cards are the engine's ints 0..47, ``(month - 1) * 4 + slot``:

======== ========================= ===========================================================================
offset   field                     values
======== ========================= ===========================================================================
0..47    my hand                   1 where I hold the card
48..95   the field                 1 where the card lies on the field
96..143  my capture pile           1 where I captured the card
144..191 the opponent's pile       1 where the opponent captured the card
192..239 the drawn card            1 at the drawn card when I must choose what it captures, else all 0
240      opponent's hand size      0..8
241      stock size                0..24
242      my score                  the match points I hold
243      the opponent's score      the match points the opponent holds
244      my koi-koi calls          calls made this round
245      the opponent's calls      calls made this round
246      my yaku points            what a stop would score me now (koi-koi rules included)
247      the opponent's yaku       what a stop would score the opponent now
248      round                     1..rounds
249      rounds                    the number of rounds of the match
250      I deal                    1 if I am this round's dealer, else 0
251      I lead                    1 if I played first this round, else 0
252      turn                      the turn number within the round (1 for the first)
253      decision: play            1 if I must play a hand card now
254      decision: capture         1 if I must choose what my drawn card captures
255      decision: koi-koi         1 if I must stop or call koi-koi
256      my seat                   0 for seat 1 (``player_1``), 1 for seat 2
======== ========================= ===========================================================================

The action mask (:func:`action_mask`) is an ``int8`` vector over :data:`referee.rl.actions.N_ACTIONS`: 1 for each
legal action of the seat, all 0 when the seat has no decision due.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from referee.engine import KOIKOI, STOP, Action, ActionKind, View, card, mask_of_ids
from referee.rl.actions import INDEX, N_ACTIONS

OBS_SIZE: Final = 257
"""The length of the observation vector."""

CARD_PLANES: Final = 5
"""The five 48-card planes at the start of the vector."""

FIELDS: Final[tuple[tuple[str, int, int], ...]] = (
    ("hand", 0, 48), ("field", 48, 96), ("my_captured", 96, 144), ("opponent_captured", 144, 192),
    ("drawn", 192, 240), ("opponent_hand_size", 240, 241), ("stock_size", 241, 242), ("my_score", 242, 243),
    ("opponent_score", 243, 244), ("my_koikoi_calls", 244, 245), ("opponent_koikoi_calls", 245, 246),
    ("my_yaku_points", 246, 247), ("opponent_yaku_points", 247, 248), ("round", 248, 249), ("rounds", 249, 250),
    ("dealer", 250, 251), ("leader", 251, 252), ("turn", 252, 253), ("decision_play", 253, 254),
    ("decision_capture", 254, 255), ("decision_koikoi", 255, 256), ("seat", 256, 257),
)  # fmt: skip
"""Each field's name and its ``[start, stop)`` slice of the vector (the table above)."""

SCORE_BOUND: Final = 1_000_000.0
"""Bounds of the score fields in the observation space (scores can go below 0 when points pass between seats); a
value beyond a field's bound (a rules file's huge points) is observed at the bound."""

LOW: Final = np.zeros(OBS_SIZE, dtype=np.float32)
HIGH: Final = np.ones(OBS_SIZE, dtype=np.float32)
LOW[242:244] = -SCORE_BOUND
HIGH[240:253] = (8, 24, SCORE_BOUND, SCORE_BOUND, 48, 48, SCORE_BOUND, SCORE_BOUND, 1000, 1000, 1, 1, 100)
"""The observation space's bounds, field by field."""

_DECISION: Final[dict[str | None, tuple[int, int, int]]] = {
    None: (0, 0, 0),
    "play": (1, 0, 0),
    "capture": (0, 1, 0),
    "koikoi": (0, 0, 1),
}
_UNPACK: Final = np.unpackbits
_FROM: Final = np.frombuffer
_U8: Final = np.uint8


def _vector(
    seat: int, hand: int, field: int, mine: int, theirs: int, drawn: int, scalars: tuple[float, ...]
) -> npt.NDArray[np.float32]:
    planes = hand | field << 48 | mine << 96 | theirs << 144 | ((1 << drawn) << 192 if drawn >= 0 else 0)
    out = np.empty(OBS_SIZE, dtype=np.float32)
    out[:240] = _UNPACK(_FROM(planes.to_bytes(30, "little"), _U8), bitorder="little")
    out[240:] = scalars
    np.clip(out[240:253], LOW[240:253], HIGH[240:253], out=out[240:253])  # a rules file's huge points: at the bound
    return out


def encode(view: View) -> npt.NDArray[np.float32]:
    """The observation vector of ``view`` (``observe(state, seat)``)."""
    me = view.seat
    op = 1 - me
    decision = _DECISION[view.decision if view.to_move == me else None]
    return _vector(
        me, view.hand, view.field, view.captured[me], view.captured[op], view.drawn if decision[1] else -1,
        (
            view.opponent_hand_size, view.stock_size, view.scores[me], view.scores[op], view.koikoi_calls[me],
            view.koikoi_calls[op], view.yaku[me].total, view.yaku[op].total, view.round, view.rounds,
            view.dealer == me, view.leader == me, view.turn, *decision, me,
        ),
    )  # fmt: skip


def action_mask(legal: Iterable[Action]) -> npt.NDArray[np.int8]:
    """The mask of the legal actions ``legal`` (``view.legal``)."""
    mask = np.zeros(N_ACTIONS, dtype=np.int8)
    mask[[INDEX[a] for a in legal]] = 1
    return mask


def encode_wire(view: Mapping[str, Any]) -> npt.NDArray[np.float32]:
    """The observation vector of a request's ``view`` in ``koikoi/1`` wire form (seats 1 and 2): the same
    numbers as :func:`encode` of the view it was built from."""
    me = int(view["seat"]) - 1
    op = 1 - me
    decision = _DECISION[view.get("decision") if view.get("to_move") == me + 1 else None]
    drawn = view.get("drawn")
    captured, scores, calls, yaku = view["captured"], view["scores"], view["koikoi_calls"], view["yaku"]
    return _vector(
        me, mask_of_ids(view["hand"]), mask_of_ids(view["field"]), mask_of_ids(captured[me]),
        mask_of_ids(captured[op]), card(drawn) if drawn is not None and decision[1] else -1,
        (
            view["opponent_hand_size"], view["stock_size"], scores[me], scores[op], calls[me], calls[op],
            yaku[me]["total"], yaku[op]["total"], view["round"], view["rounds"], view["dealer"] == me + 1,
            view["leader"] == me + 1, view["turn"], *decision, me,
        ),
    )  # fmt: skip


def wire_action(action: Mapping[str, Any], drawn: str | None) -> Action:
    """The engine action of a wire action object (``{"play": id}``, ``{"capture": id}`` ...); a capture's drawn
    card is ``drawn`` (the view's). ``ValueError`` for anything else."""
    try:
        if set(action) == {"koikoi"}:
            return KOIKOI if action["koikoi"] is True else STOP
        if "play" in action:
            target = card(action["capture"]) if "capture" in action else -1
            return Action(ActionKind.PLAY, card(action["play"]), target)
        if set(action) == {"capture"} and drawn is not None:
            return Action(ActionKind.CHOOSE, card(drawn), card(action["capture"]))
    except Exception as exc:
        raise ValueError(f"not a koikoi/1 action: {action!r}: {exc}") from None
    raise ValueError(f"not a koikoi/1 action: {action!r}")
