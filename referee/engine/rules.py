"""The rules model: one frozen record of every option, the four presets, and rules files.

A preset is only a set of values of :class:`Rules`. A rules file (TOML or JSON) names a ``base`` preset and overrides
some fields; an unknown field or an impossible value raises :class:`RulesError` naming the field, and so does a
combination that would make a field dead (a value that could never change a game).
"""

from __future__ import annotations

import dataclasses
import json
import tomllib
from dataclasses import dataclass, field, fields
from enum import StrEnum
from pathlib import Path
from typing import Any, Final

from referee.engine.errors import RulesError


class FirstDealer(StrEnum):
    """Who deals the first round."""

    SEAT1 = "seat1"
    SEAT2 = "seat2"
    RANDOM = "random"  # drawn from the match seed


class Leader(StrEnum):
    """Who plays first in a round."""

    DEALER = "dealer"
    NON_DEALER = "non_dealer"


class NextDealer(StrEnum):
    """Who deals the round after a round that somebody won."""

    WINNER_LEADS = "winner_leads"  # the dealer is chosen so that the winner plays first
    WINNER_DEALS = "winner_deals"
    ALTERNATE = "alternate"


class CaptureThree(StrEnum):
    """What a card matching three field cards captures."""

    ALL = "all"  # all four cards of the month
    CHOOSE = "choose"  # one of the three, chosen by the player


class KoikoiScoring(StrEnum):
    """How a stop is scored after k koi-koi calls by the stopping player this round."""

    NONE = "none"  # yaku points, whatever k
    DOUBLE = "double"  # yaku points x 2^k
    ADD_THEN_MULTIPLY = "add_then_multiply"  # + k when k <= 3, x (k - 2) when k > 3


class Reopen(StrEnum):
    """What gives a player the stop / koi-koi choice at the end of a turn."""

    POINTS_RISE = "points_rise"  # the yaku points are higher than at the start of the turn (a new or grown yaku)
    NEW_YAKU = "new_yaku"  # a yaku the player did not hold at the start of the turn


class LastTurn(StrEnum):
    """What happens when the choice arises on a player's own last turn (hand now empty)."""

    CHOICE = "choice"  # stop / koi-koi is offered as on any turn
    AUTO_STOP = "auto_stop"  # the player stops and scores, no choice


class SetGrowth(StrEnum):
    """Whether the set yaku (poetry ribbons, blue ribbons, both together, boar-deer-butterfly) grow with further cards
    of their kind (ribbons, animals)."""

    NONE = "none"  # a set scores its points; the ribbons and animals yaku count every card on their own
    GROW = "grow"  # +1 per further card of the kind; while a set of the kind scores, the count yaku of it does not
    GROW_AND_COUNT = "grow_and_count"  # +1 per further card of the kind, and the count yaku scores as well


class TieBreak(StrEnum):
    """The match result when both players end with equal points."""

    FIRST_DEALER = "first_dealer"
    DRAW = "draw"


def _int(lo: int, hi: int = 10_000, doc: str = "", default: int | None = None) -> Any:
    return field(default=lo if default is None else default, metadata={"range": (lo, hi), "doc": doc})


def _opt(default: Any, doc: str) -> Any:
    return field(default=default, metadata={"doc": doc})


@dataclass(frozen=True, slots=True)
class Rules:
    """Every option of a Koi-Koi match. Point values of 0 switch a yaku off."""

    name: str = "guide"
    # match
    rounds: int = _int(1, 1000, "rounds per match")
    starting_points: int = _int(0, 100_000, "points each player starts the match with")
    end_when_broke: bool = False  # the match ends early when a player has 0 points or fewer
    transfer_points: bool = False  # round points pass from the loser to the winner
    tie_break: TieBreak = TieBreak.FIRST_DEALER
    # dealing and turn order
    first_dealer: FirstDealer = FirstDealer.SEAT1
    leader: Leader = Leader.NON_DEALER
    next_dealer: NextDealer = NextDealer.WINNER_LEADS
    pass_deal_when_nobody_wins: bool = _opt(
        False, "after a round nobody won, the other player deals (false: the same dealer)")
    misdeal_field_four: bool = True  # four cards of one month on the field: redeal
    misdeal_field_three: bool = _opt(False, "three or four cards of one month on the field: redeal")
    misdeal_field_four_pairs: bool = False  # four pairs of months on the field: redeal
    misdeal_hand_four: bool = False  # four cards of one month in either hand: redeal
    teshi_points: int = _int(0, 1000, "four cards of one month in an opening hand; 0: no such hand yaku")
    kuttsuki_points: int = _int(0, 1000, "four pairs of months in an opening hand; 0: no such hand yaku")
    # a turn
    must_match_from_hand: bool = False  # a player who can match from the hand may not discard
    capture_three: CaptureThree = CaptureThree.ALL
    # yaku
    five_brights: int = _int(0)
    four_brights_dry: int = _int(0)
    four_brights_wet: int = _int(0)
    three_brights: int = _int(0)
    bright_yaku_combine: bool = False  # False: only the highest bright yaku counts
    poetry_ribbons: int = _int(0)
    blue_ribbons: int = _int(0)
    poetry_blue_bonus: int = _int(0, doc="further points when both poetry and blue ribbons are held")
    poetry_and_blue_ribbons: int = _int(
        0, doc="poetry and blue ribbons held together: one yaku of these points in place of both; 0: each its own")
    boar_deer_butterfly: int = _int(0)
    set_growth: SetGrowth = field(default=SetGrowth.NONE, metadata={"doc": (
        "grow: poetry, blue, both, boar-deer-butterfly +1 per further ribbon or animal, in place of the ribbons or "
        "animals yaku; grow_and_count: and that yaku too; none: fixed")})
    ribbons_min: int = _int(1, 10, "ribbons needed for the ribbons yaku")
    ribbons_points: int = _int(0, doc="points of the ribbons yaku at its minimum")
    ribbons_extra: int = _int(0, doc="points per ribbon beyond the minimum")
    animals_min: int = _int(1, 9)
    animals_points: int = _int(0)
    animals_extra: int = _int(0)
    chaff_min: int = _int(1, 25)
    chaff_points: int = _int(0)
    chaff_extra: int = _int(0)
    sake_as_chaff: bool = False  # the sake cup also counts as chaff
    cherry_viewing: int = _int(0, doc="sake cup + cherry curtain; 0: no such yaku")
    moon_viewing: int = _int(0, doc="sake cup + pampas moon; 0: no such yaku")
    cherry_viewing_after_koikoi: int = _int(
        0, doc="cherry viewing once the player has called koi-koi this round; follows cherry_viewing = 0")
    moon_viewing_after_koikoi: int = _int(
        0, doc="moon viewing once the player has called koi-koi this round; follows moon_viewing = 0")
    # koi-koi
    koikoi_scoring: KoikoiScoring = KoikoiScoring.DOUBLE
    reopen: Reopen = Reopen.POINTS_RISE
    last_turn: LastTurn = LastTurn.CHOICE
    exhausted_dealer_points: int = _int(0, 1000, "points the dealer wins when both hands run out")
    koikoi_calls_per_round: int = _int(
        0, 1000, "koi-koi calls allowed per round, both players together; then the next yaku ends the round; 0: no "
        "limit")
    double_from: int = _int(0, 10_000, "a stop that scores this many points or more is doubled; 0: never")
    double_after_opponent_koikoi: bool = _opt(
        False, "a stop is doubled when the opponent called koi-koi earlier in the round")

    def __reduce__(self) -> tuple[type[Rules], tuple[Any, ...]]:
        """Pickle and copy by the fields (a compiled build cannot set a frozen record's fields one by one)."""
        return Rules, tuple(getattr(self, f.name) for f in fields(self))

    def to_dict(self, complete: bool = False) -> dict[str, Any]:
        """The fields as plain JSON/TOML values, in declaration order: the wire form of the rule set.

        The fields added after the first rule set of the koikoi/1 protocol (:data:`LATER_FIELDS`) are left out while
        they hold their default, which changes no game, so that every rule set that does not use them reads as it
        always did; ``complete=True`` writes every field.
        """
        return {
            name: _plain(getattr(self, name))
            for name in _FIELD_NAMES
            if complete or name not in LATER_FIELDS or getattr(self, name) != _DEFAULTS[name]
        }

    def to_toml(self) -> str:
        """The full option set as a TOML document that :func:`load_rules` reads back."""
        lines = [f"# koikoi-referee rules {self.name!r}"]
        if self.name in PRESETS:  # every field follows, so rules that are no preset need no base
            lines.append(f"base = {json.dumps(self.name)}")
        for f in fields(self):
            value = _plain(getattr(self, f.name))
            text = json.dumps(value) if not isinstance(value, bool) else ("true" if value else "false")
            doc = f.metadata.get("doc", "")
            lines.append(f"{f.name} = {text}" + (f"  # {doc}" if doc else ""))
        return "\n".join(lines) + "\n"


_FIELD_NAMES: Final = tuple(f.name for f in fields(Rules))
"""The fields of :class:`Rules`, in declaration order (a rule set is written out at every match's start)."""

LATER_FIELDS: Final = frozenset({
    "pass_deal_when_nobody_wins", "misdeal_field_three", "poetry_and_blue_ribbons", "set_growth",
    "koikoi_calls_per_round", "double_from", "double_after_opponent_koikoi",
})  # fmt: skip
"""Fields added after the first koikoi/1 rule set: written out only when set, and optional in a full rule set."""

_DEFAULTS: Final[dict[str, Any]] = {f.name: f.default for f in fields(Rules)}


def _plain(value: Any) -> Any:
    return value.value if isinstance(value, StrEnum) else value


_COMMON: dict[str, Any] = dict(
    ribbons_min=5, ribbons_points=1, ribbons_extra=1,
    animals_min=5, animals_points=1, animals_extra=1,
    chaff_min=10, chaff_points=1, chaff_extra=1,
)  # fmt: skip

GUIDE = Rules(
    name="guide", rounds=6, starting_points=0, end_when_broke=False, transfer_points=False,
    tie_break=TieBreak.FIRST_DEALER, first_dealer=FirstDealer.SEAT1, leader=Leader.NON_DEALER,
    next_dealer=NextDealer.WINNER_LEADS, misdeal_field_four=True, must_match_from_hand=True,
    five_brights=10, four_brights_dry=8, four_brights_wet=7, three_brights=5,
    poetry_ribbons=5, blue_ribbons=5, boar_deer_butterfly=5, sake_as_chaff=False,
    cherry_viewing=5, moon_viewing=5, cherry_viewing_after_koikoi=5, moon_viewing_after_koikoi=5,
    koikoi_scoring=KoikoiScoring.DOUBLE, reopen=Reopen.POINTS_RISE, last_turn=LastTurn.CHOICE,
    exhausted_dealer_points=0, **_COMMON,
)  # fmt: skip
"""The Spanish teaching guide (sources/000)."""

CARDAVIA = Rules(
    name="cardavia", rounds=1, starting_points=0, end_when_broke=False, transfer_points=False,
    tie_break=TieBreak.DRAW, first_dealer=FirstDealer.RANDOM, leader=Leader.DEALER,
    next_dealer=NextDealer.WINNER_DEALS, misdeal_field_four=True, misdeal_field_four_pairs=True,
    teshi_points=6, kuttsuki_points=6, must_match_from_hand=False,
    five_brights=15, four_brights_dry=10, four_brights_wet=8, three_brights=6,
    poetry_ribbons=6, blue_ribbons=6, boar_deer_butterfly=5, sake_as_chaff=True,
    cherry_viewing=0, moon_viewing=0, cherry_viewing_after_koikoi=0, moon_viewing_after_koikoi=0,
    koikoi_scoring=KoikoiScoring.NONE, reopen=Reopen.POINTS_RISE, last_turn=LastTurn.CHOICE,
    exhausted_dealer_points=0, **_COMMON,
)  # fmt: skip
"""The Cardavia rules panel (sources/002): a single deal."""

KOIKOI_JAPAN = Rules(
    name="koikoi-japan", rounds=8, starting_points=30, end_when_broke=True, transfer_points=True,
    tie_break=TieBreak.DRAW, first_dealer=FirstDealer.RANDOM, leader=Leader.DEALER,
    next_dealer=NextDealer.WINNER_DEALS, misdeal_field_four=True, misdeal_hand_four=True,
    must_match_from_hand=False,
    five_brights=10, four_brights_dry=8, four_brights_wet=7, three_brights=5,
    poetry_ribbons=5, blue_ribbons=5, poetry_blue_bonus=10, boar_deer_butterfly=5, sake_as_chaff=True,
    cherry_viewing=1, moon_viewing=1, cherry_viewing_after_koikoi=3, moon_viewing_after_koikoi=3,
    koikoi_scoring=KoikoiScoring.ADD_THEN_MULTIPLY, reopen=Reopen.POINTS_RISE, last_turn=LastTurn.AUTO_STOP,
    exhausted_dealer_points=1, **_COMMON,
)  # fmt: skip
"""The rules of KoiKoi-Japan, used by the Koi-Koi AI research community."""

NINTENDO = Rules(
    name="nintendo", rounds=12, starting_points=0, end_when_broke=False, transfer_points=False,
    tie_break=TieBreak.DRAW, first_dealer=FirstDealer.RANDOM, leader=Leader.DEALER,
    next_dealer=NextDealer.WINNER_DEALS, pass_deal_when_nobody_wins=True,
    misdeal_field_four=False, misdeal_field_three=True, teshi_points=6, kuttsuki_points=6,
    must_match_from_hand=False,
    five_brights=10, four_brights_dry=8, four_brights_wet=7, three_brights=5,
    poetry_ribbons=5, blue_ribbons=5, poetry_and_blue_ribbons=10, set_growth=SetGrowth.GROW,
    boar_deer_butterfly=5, sake_as_chaff=True,
    cherry_viewing=5, moon_viewing=5, cherry_viewing_after_koikoi=5, moon_viewing_after_koikoi=5,
    koikoi_scoring=KoikoiScoring.NONE, reopen=Reopen.POINTS_RISE, last_turn=LastTurn.CHOICE,
    exhausted_dealer_points=0, koikoi_calls_per_round=1, double_from=7, double_after_opponent_koikoi=True,
    **_COMMON,
)  # fmt: skip
"""The rules of Nintendo's Koi-Koi, which most digital versions follow: 12 rounds, points added up."""

PRESETS: dict[str, Rules] = {r.name: r for r in (GUIDE, CARDAVIA, KOIKOI_JAPAN, NINTENDO)}
"""The presets by name."""

_FIELDS = {f.name: f for f in fields(Rules)}


def rules_from_dict(data: Any, *, source: str = "rules") -> Rules:  # Any: checked here, also when compiled
    """Build rules from a mapping: ``base`` (a preset name) plus overridden fields.

    Without ``base`` the mapping must set every field. Raises :class:`RulesError` naming the offending field.
    """
    if not isinstance(data, dict):
        raise RulesError(f"{source}: expected a table of rule options, got {type(data).__name__}")
    data = dict(data)
    base_name = data.pop("base", None)
    if base_name is None:
        missing = [n for n in _FIELDS if n != "name" and n not in LATER_FIELDS and n not in data]
        if missing:
            raise RulesError(
                f"{source}: name a base preset (base = \"guide\") or set every field; missing: {', '.join(missing)}"
            )
        base = GUIDE
    else:
        if not isinstance(base_name, str) or base_name not in PRESETS:
            raise RulesError(f"{source}: field 'base': unknown preset {base_name!r}; presets: {', '.join(PRESETS)}")
        base = PRESETS[base_name]
    changes: dict[str, Any] = {}
    for key, value in data.items():
        if key not in _FIELDS:
            raise RulesError(f"{source}: unknown field {key!r}")
        changes[key] = _check(key, value, source)
    for yaku in ("cherry_viewing", "moon_viewing"):  # 0 switches the yaku off, after a koi-koi call too
        if changes.get(yaku) == 0 and f"{yaku}_after_koikoi" not in changes:
            changes[f"{yaku}_after_koikoi"] = 0
    rules = dataclasses.replace(base, **changes)
    name = changes.get("name", base.name)
    preset = PRESETS.get(name)
    if preset is not None and dataclasses.replace(rules, name=name) != preset:
        name = f"{name}-custom"  # rules that differ from a preset never carry its name
    rules = dataclasses.replace(rules, name=name)
    _check_whole(rules, source)
    return rules


def _check(key: str, value: Any, source: str) -> Any:
    f = _FIELDS[key]
    kind = f.type if isinstance(f.type, str) else f.type.__name__  # a name, or the class itself when compiled
    if kind == "str":
        if not isinstance(value, str) or not value or len(value) > 64:
            raise RulesError(f"{source}: field {key!r}: expected a name of 1 to 64 characters")
        return value
    if kind == "bool":
        if not isinstance(value, bool):
            raise RulesError(f"{source}: field {key!r}: expected true or false, got {value!r}")
        return value
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise RulesError(f"{source}: field {key!r}: expected a whole number, got {value!r}")
        lo, hi = f.metadata["range"]
        if not lo <= value <= hi:
            raise RulesError(f"{source}: field {key!r}: {value} is outside {lo}..{hi}")
        return value
    enum_type = _ENUMS[kind]
    try:
        return enum_type(value)
    except ValueError:
        choices = ", ".join(repr(e.value) for e in enum_type)
        raise RulesError(f"{source}: field {key!r}: {value!r} is not one of {choices}") from None


def _check_whole(rules: Rules, source: str) -> None:
    """Reject combinations of fields that make one of them meaningless (a dead option), naming both."""
    if rules.end_when_broke and rules.starting_points == 0:
        raise RulesError(f"{source}: field 'end_when_broke': needs starting_points above 0")
    for yaku in ("cherry_viewing", "moon_viewing"):
        after = getattr(rules, f"{yaku}_after_koikoi")
        if getattr(rules, yaku) == 0 and after:
            raise RulesError(
                f"{source}: field '{yaku}_after_koikoi' = {after} can never score: '{yaku}' = 0 switches the "
                "yaku off; set both to 0, or give it points"
            )
    if rules.teshi_points and rules.misdeal_hand_four:
        raise RulesError(
            f"{source}: field 'teshi_points' = {rules.teshi_points} can never score: 'misdeal_hand_four' = true "
            "redeals such a hand first; set one of them off"
        )
    if rules.misdeal_field_three and rules.misdeal_field_four:
        raise RulesError(
            f"{source}: field 'misdeal_field_four' = true can never redeal: 'misdeal_field_three' = true redeals "
            "such a field first; set misdeal_field_four = false"
        )
    if rules.pass_deal_when_nobody_wins and rules.exhausted_dealer_points:
        raise RulesError(
            f"{source}: field 'pass_deal_when_nobody_wins' = true can never act: 'exhausted_dealer_points' = "
            f"{rules.exhausted_dealer_points} makes the dealer win every round nobody stops; set one of them off"
        )
    if rules.poetry_and_blue_ribbons and rules.poetry_blue_bonus:
        raise RulesError(
            f"{source}: field 'poetry_blue_bonus' = {rules.poetry_blue_bonus} can never score: "
            f"'poetry_and_blue_ribbons' = {rules.poetry_and_blue_ribbons} scores both sets as one yaku; set one "
            "of them to 0"
        )
    sets = (rules.poetry_ribbons, rules.blue_ribbons, rules.poetry_and_blue_ribbons, rules.boar_deer_butterfly)
    if rules.set_growth is not SetGrowth.NONE and not any(sets):
        raise RulesError(
            f"{source}: field 'set_growth' = {rules.set_growth.value!r} can never act: poetry_ribbons, blue_ribbons, "
            "poetry_and_blue_ribbons and boar_deer_butterfly are all 0"
        )


_ENUMS: dict[str, type[StrEnum]] = {
    cls.__name__: cls
    for cls in (FirstDealer, Leader, NextDealer, CaptureThree, KoikoiScoring, Reopen, LastTurn, SetGrowth, TieBreak)
}


def load_rules(spec: str | Path) -> Rules:
    """Rules from a preset name or from a ``.toml`` / ``.json`` rules file."""
    if isinstance(spec, str) and spec in PRESETS:
        return PRESETS[spec]
    path = Path(spec)
    if not path.is_file():
        raise RulesError(f"{spec}: neither a preset ({', '.join(PRESETS)}) nor a rules file")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RulesError(f"{path}: cannot read: {exc}") from None
    try:
        data = json.loads(text) if path.suffix.lower() == ".json" else tomllib.loads(text)
    except (ValueError, RecursionError) as exc:
        raise RulesError(f"{path}: not valid {'JSON' if path.suffix.lower() == '.json' else 'TOML'}: {exc}") from None
    return rules_from_dict(data, source=str(path))
