"""``koikoi-referee check``: a compliance run of one bot, in seconds, with a checklist and an exit code.

The bot plays short matches, one process reused from match to match (so every match after the first opens with
``new_match``), against an opponent in memory that always takes the first legal action. Each match uses scripted
deals (:mod:`referee.compliance_deals`) that force one decision or event on the bot whatever it plays; the item
passes when the bot met it and played the match out. A bot that fails an item forfeits that match; the next item
starts a fresh process. Last, the bot is sent ``bye`` and must exit.

The checklist: the handshake, ``new_match`` on a reused process, a capture choice on a play and on a draw, the
koi-koi/stop choice, a misdeal and its redeal, a hand yaku (where the rules score one), a round where nobody
scores played to the last turn, answers that draw on the time bank, and ``bye``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee import compliance_deals as scripted
from referee.engine import Rules
from referee.match import MatchConfig, MatchResult, TimeControl, log_name, run_sync
from referee.match import play_match as _play
from referee.protocol import Request, bye_message, encode, request_legal
from referee.seats import BotSeat
from referee.seats.process import BotClosedError, Limits
from referee.seats.scripted import ScriptedSeat, first_legal

OPPONENT = "check-opponent"
"""The name of the opponent in memory."""
NEW_MATCH = "new_match on a reused process"
"""The item of the second match (the first one after the handshake's)."""
_NO_YAKU = (
    "five_brights", "four_brights_dry", "four_brights_wet", "three_brights", "poetry_ribbons", "blue_ribbons",
    "poetry_blue_bonus", "boar_deer_butterfly", "ribbons_points", "ribbons_extra", "animals_points",
    "animals_extra", "chaff_points", "chaff_extra", "cherry_viewing", "moon_viewing",
    "cherry_viewing_after_koikoi", "moon_viewing_after_koikoi", "teshi_points", "kuttsuki_points",
    "exhausted_dealer_points",
)  # fmt: skip


@dataclass
class Item:
    """One line of the checklist: ``status`` is ``pass``, ``fail`` or ``skip``; ``detail`` says why."""

    name: str
    status: str = "fail"
    detail: str = ""
    log: Path | None = None

    def line(self) -> str:
        """The checklist line."""
        mark = {"pass": "PASS", "fail": "FAIL", "skip": "SKIP"}[self.status]
        tail = f": {self.detail}" if self.detail else ""
        where = f" (its stderr: {self.log})" if self.log is not None and self.status == "fail" else ""
        return f"  {mark} {self.name}{tail}{where}"


@dataclass
class Report:
    """The checklist of one bot: its items in order, the time the run took and the log folder."""

    items: list[Item] = field(default_factory=list)
    seconds: float = 0.0
    log_dir: Path | None = None

    @property
    def passed(self) -> bool:
        """True when no item failed."""
        return all(i.status != "fail" for i in self.items)

    def first_violation(self) -> Item | None:
        """The first failed item, if any."""
        return next((i for i in self.items if i.status == "fail"), None)


class _Watched(BotSeat):
    """A bot seat that notes the decisions it was asked and the events it was sent, per match."""

    def __init__(self, command: str, **options: Any) -> None:
        super().__init__(command, **options)
        self.decisions: list[Request] = []
        self.events: list[str] = []

    def forget(self) -> None:
        """Start a new match's notes."""
        self.decisions, self.events = [], []

    async def ask(
        self, request: Request, timeout_s: float, meanwhile: Callable[[], object] | None = None
    ) -> tuple[bytes, float]:
        """Note the request, then ask it."""
        self.decisions.append(request)
        return await super().ask(request, timeout_s, meanwhile)

    async def send_many(self, msgs: list[dict[str, Any]]) -> None:
        """Note the events, then hold them back as a bot seat does."""
        self.events += [str(m.get("event")) for m in msgs]
        await super().send_many(msgs)

    async def send_encoded(self, msgs: list[tuple[dict[str, Any], bytes]]) -> None:
        """Note the events, then hold them back as a bot seat does."""
        self.events += [str(m.get("event")) for m, _ in msgs]
        await super().send_encoded(msgs)


def _choice_on_play(request: Request) -> bool:
    plays = [a.get("play") for a in request_legal(request) if "play" in a]
    return request.decision == "play" and len(plays) != len(set(plays))


@dataclass(frozen=True)
class _Stage:
    name: str
    rules: Rules
    deals: scripted.Scripted | None
    met: Callable[[_Watched], bool]
    time: TimeControl = TimeControl()  # noqa: RUF009 - frozen


def _stages(rules: Rules, time_control: TimeControl) -> list[tuple[str, _Stage | str]]:
    """The checklist's matches, or for an item the rules leave out the reason it is skipped."""
    one = dataclasses.replace(rules, rounds=1)
    out: list[tuple[str, _Stage | str]] = []

    def add(name: str, deals: scripted.Scripted | None, met: Callable[[_Watched], bool], why: str,
            base: Rules = one, tc: TimeControl = time_control) -> None:  # fmt: skip
        out.append((name, _Stage(name, base, deals, met, tc) if deals is not None or why == "" else why))

    add("capture choice on a play", scripted.capture_on_play(one), lambda s: any(map(_choice_on_play, s.decisions)),
        "no deal found")  # fmt: skip
    add(NEW_MATCH, None, lambda s: len(s.decisions) > 0, "")
    add("capture choice on a draw", scripted.capture_on_draw(one),
        lambda s: any(r.decision == "capture" for r in s.decisions), "no deal found")  # fmt: skip
    add("koi-koi or stop", scripted.koikoi(one), lambda s: any(r.decision == "koikoi" for r in s.decisions),
        f"the rules {rules.name} score neither boar-deer-butterfly nor moon viewing")  # fmt: skip
    add("misdeal and redeal", scripted.misdeal(one), lambda s: "misdeal" in s.events,
        f"the rules {rules.name} never redeal")  # fmt: skip
    two = dataclasses.replace(rules, rounds=2)  # the bot is asked again after the round that ends at once
    add("hand yaku", scripted.hand_yaku(one), lambda s: "hand_yaku" in s.events,
        f"the rules {rules.name} score no hand yaku", two)  # fmt: skip
    zeros: dict[str, Any] = {k: 0 for k in _NO_YAKU}
    dry = dataclasses.replace(two, **zeros, name=f"{rules.name}-no-yaku")
    add("a round with no yaku, to the last turn", None,
        lambda s: "round_end" in s.events and sum(r.decision == "play" for r in s.decisions) >= 8, "",
        dry)  # fmt: skip
    bank = dataclasses.replace(time_control, move_ms=1)
    add("answers drawing on the time bank", None, lambda s: len(s.decisions) > 0, "", one, bank)
    return out


def check(
    command: str,
    rules: Rules,
    *,
    limits: Limits | None = None,
    time_control: TimeControl | None = None,
    log_dir: Path | None = None,
    on_item: Callable[[Item], None] | None = None,
) -> Report:
    """Run the checklist on the bot ``command`` (a command line or a bot folder) under ``rules``."""
    t0 = time.perf_counter()
    tc = time_control or TimeControl()
    folder = log_dir or Path(tempfile.mkdtemp(prefix="koikoi-check-"))
    report = Report(log_dir=folder)

    def done(item: Item) -> None:
        report.items.append(item)
        if on_item is not None:
            on_item(item)

    async def main() -> list[MatchResult]:
        seat: _Watched | None = None
        hello = Item("hello")
        try:
            for k, (name, stage) in enumerate(_stages(rules, tc)):
                if isinstance(stage, str):
                    done(Item(name, "skip", stage))
                    continue
                match_id = f"c-{k + 1:04d}"
                log = folder / log_name(match_id, 0)
                reused = seat is not None and seat.failed is None
                if seat is None or seat.failed is not None:
                    if seat is not None:
                        await seat.close()
                    seat = _Watched(command, label="bot", stderr_path=log, limits=limits)
                    seat.log_of = lambda mid: folder / log_name(mid, 0)
                seat.forget()
                config = MatchConfig(
                    rules=stage.rules, seed=k + 1, match_id=match_id,
                    deals=() if stage.deals is None else stage.deals.deals,
                    first_dealer=None if stage.deals is None else stage.deals.first_dealer, time=stage.time,
                )  # fmt: skip
                result = await _play((seat, ScriptedSeat(OPPONENT, policy=first_legal)), config)
                failed = result.forfeit is not None and result.forfeit.seat == 0
                if not report.items:
                    if failed and not seat.decisions:
                        hello.detail, hello.log = _violation(result), log
                    else:
                        version = "no version" if seat.version is None else f"version {seat.version!r}"
                        hello.status, hello.detail = "pass", f"name {seat.name!r}, {version}"
                    done(hello)
                if name == NEW_MATCH and not reused:
                    item = Item(name, "skip", "the first match failed: this match started a fresh process")
                elif failed:
                    item = Item(name, "fail", _violation(result), log)
                elif result.forfeit is not None:
                    item = Item(name, "fail", f"the check's own opponent failed: {_violation(result)}")
                elif not stage.met(seat):
                    item = Item(name, "fail", "the scripted deal did not lead to it (please report this)")
                else:
                    item = Item(name, "pass")
                done(item)
            done(await _bye(seat))
        finally:
            if seat is not None:
                await seat.close()
        return []

    run_sync(main)
    report.seconds = time.perf_counter() - t0
    return report


def _violation(result: MatchResult) -> str:
    f = result.forfeit
    assert f is not None
    return f"{f.reason.value}: {f.detail}"


async def _bye(seat: _Watched | None) -> Item:
    """Send ``bye`` to a running bot and wait up to 2 s for it to exit."""
    item = Item("bye: the bot exits")
    if seat is None or seat.failed is not None or not seat.started:
        item.status, item.detail = "skip", "no running bot after the last match"
        return item
    seat.process.thaw()  # frozen since its last answer: it could not read its bye
    try:
        seat.process.write(encode(bye_message()))
    except BotClosedError as exc:
        item.detail = f"cannot send bye: {exc}"
        return item
    for _ in range(40):
        if seat.process.returncode is not None:
            break
        await asyncio.sleep(0.05)
    code = seat.process.returncode
    if code is None:
        item.detail = "still running 2 s after bye"
    elif code != 0:
        item.detail = f"exited with status {code} after bye"
    else:
        item.status = "pass"
    seat.failed = None
    seat.started = False  # bye is sent: close only ends what is left
    return item
