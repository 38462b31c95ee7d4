"""The asymmetry test (:mod:`referee.tournament.asymmetry`) against p-values worked out by hand, then against
full enumeration of the sign flips, SciPy's exact Wilcoxon test and, past the exact range, its normal
approximation; and how the standings feed it from the pairs' recorded order."""

from __future__ import annotations

import itertools
import random
from fractions import Fraction

import pytest
from scipy import stats

from referee.engine import PRESETS
from referee.records import MatchResult, Termination
from referee.tournament.asymmetry import ALPHA, EXACT_MAX, Asymmetry, Differences, doubled_ranks, signed_rank_p
from referee.tournament.config import BotSpec, TournamentConfig
from referee.tournament.records import Record
from referee.tournament.schedule import MatchSpec, build_schedule, order_of, work_units
from referee.tournament.standings import compute

# (differences, p by hand). Ranks of |d| (ties share their mean rank, zeros are left out); p is the share of the
# 2**n sign patterns whose positive ranks sum to at least the observed sum T+.
HAND = [
    ([], Fraction(1)),  # nothing to test
    ([0, 0, 0], Fraction(1)),  # the two games always tied
    ([5], Fraction(1, 2)),  # T+ = 1; sums 0 1: one of two
    ([-5], Fraction(1)),  # T+ = 0: every pattern reaches it
    ([1, 3, 5], Fraction(1, 8)),  # ranks 1 2 3 all positive, T+ = 6: the observed pattern only
    ([1, 3, -5], Fraction(5, 8)),  # T+ = 1+2 = 3; sums 0 1 2 3 3 4 5 6: five reach 3
    ([1, -3, 5], Fraction(3, 8)),  # T+ = 1+3 = 4: {1,3} {2,3} {1,2,3}
    ([2, -2, 4], Fraction(3, 8)),  # ranks 1.5 1.5 3, T+ = 4.5; sums 0 1.5 1.5 3 3 4.5 4.5 6: three reach 4.5
    ([0, 7, 0, 2], Fraction(1, 4)),  # zeros left out; ranks 2 1 both positive: one of four
    ([-1, 2, 2, 9], Fraction(2, 16)),  # ranks 1, 2.5, 2.5, 4; T+ = 9 of 10: all positive, or all but rank 1
    ([4] * 7, Fraction(1, 128)),  # seven equal gains: 2**-7, the fewest pairs that can reject at 1%
    ([4] * 6, Fraction(1, 64)),  # six cannot
]


def _hist(diffs: list[int]) -> dict[int, int]:
    d = Differences()
    d.extend(diffs)
    return d.counts


def _enumerate(diffs: list[int]) -> Fraction:
    """The p-value by listing every sign pattern (the definition)."""
    groups = doubled_ranks(_hist(diffs))
    ranks = [r for r, pos, neg in groups for _ in range(pos + neg)]
    observed = sum(r * pos for r, pos, _ in groups)
    hits = sum(1 for signs in itertools.product((0, 1), repeat=len(ranks))
               if sum(r for r, s in zip(ranks, signs, strict=True) if s) >= observed)  # fmt: skip
    return Fraction(hits, 2 ** len(ranks))


@pytest.mark.parametrize(("diffs", "p"), HAND)
def test_p_values_worked_out_by_hand(diffs: list[int], p: Fraction) -> None:
    assert _enumerate(diffs) == p  # the definition agrees with the hand count
    assert signed_rank_p(_hist(diffs)) == pytest.approx(float(p), rel=1e-12)


def test_the_flag_is_at_one_percent() -> None:
    assert Differences({4: 7}).test().flagged  # p = 1/128
    assert not Differences({4: 6}).test().flagged  # p = 1/64
    assert Asymmetry(20, 1.0, ALPHA).flagged and not Asymmetry(20, 1.0, ALPHA * 1.001).flagged


def test_the_exact_count_matches_enumeration_and_scipy() -> None:
    rng = random.Random(7)
    for n in (1, 4, 9, 14):
        for _ in range(20):
            diffs = [rng.choice([-1, 1]) * rng.randint(0, 6) for _ in range(n)]  # many ties and zeros
            assert signed_rank_p(_hist(diffs)) == pytest.approx(float(_enumerate(diffs)), rel=1e-12)
    for n in (20, 60, EXACT_MAX):  # no ties or zeros: SciPy's exact distribution is the same test
        diffs = [rng.choice([-1, 1]) * k for k in rng.sample(range(1, 10 * n), n)]
        expect = stats.wilcoxon(diffs, alternative="greater", method="exact").pvalue
        assert signed_rank_p(_hist(diffs)) == pytest.approx(expect, rel=1e-9)


def test_past_the_exact_range_the_normal_approximation_is_close() -> None:
    rng = random.Random(8)
    for shift in (0, 1, 2):
        diffs = [rng.randint(-20, 20) + shift for _ in range(3 * EXACT_MAX)]
        expect = stats.wilcoxon(diffs, alternative="greater", zero_method="wilcox", correction=True,
                                method="approx").pvalue  # fmt: skip
        assert signed_rank_p(_hist(diffs)) == pytest.approx(expect, rel=0.02, abs=1e-6)


def test_the_mean_and_the_json_fields() -> None:
    d = Differences()
    d.extend([3, -1, 0, 6])
    a = d.test()
    assert (a.pairs, a.mean) == (4, 2.0)
    assert a.to_json() == {"asymmetry_pairs": 4, "asymmetry_mean": 2.0, "asymmetry_p": 0.25, "asymmetry_flag": False}
    assert Differences().test().to_json()["asymmetry_mean"] is None


def _config(pairs: int) -> TournamentConfig:
    bots = tuple(BotSpec(n, "true") for n in ("x", "y", "z"))
    return TournamentConfig(bots=bots, rules=PRESETS["cardavia"], pairs=pairs, seed=11)


def test_the_order_is_a_coin_of_the_pair_and_units_play_the_first_game_first() -> None:
    schedule = build_schedule(_config(200))
    firsts = [m for m in schedule if m.order == 1]
    assert len(firsts) == len(schedule) // 2  # one game of each pair
    b_first = sum(m.game == "b" for m in firsts)
    assert 0.4 * len(firsts) < b_first < 0.6 * len(firsts)  # a fair coin (fixed seed: 600 pairs, no flake)
    assert schedule == build_schedule(_config(200))  # the same schedule in every run
    for m in schedule:
        assert m.order == order_of(m.seed, m.game)
    for jobs in (1, 2, 5):
        for unit in work_units(schedule, jobs):
            for first, second in zip(unit[::2], unit[1::2], strict=True):
                assert (first.pairing, first.pair) == (second.pairing, second.pair)
                assert (first.order, second.order) == (1, 2)


def _record(spec: MatchSpec, scores: tuple[int, int], order: int | None) -> Record:
    winner = None if scores[0] == scores[1] else int(scores[1] > scores[0])
    result = MatchResult(spec.match_id, winner, scores, 1, Termination.ROUNDS, None, spec.seats, spec.seed, 10)
    return Record(spec, result, None, order)


def test_standings_take_second_minus_first_margins_for_both_bots() -> None:
    bots = (BotSpec("x", "true"), BotSpec("y", "true"))
    config = TournamentConfig(bots=bots, rules=PRESETS["cardavia"], pairs=8, seed=3)
    records = []
    for m in build_schedule(config):  # x scores 5-0 in the second-played game, 0-0 in the first
        x_seat = m.seats.index("x")
        second = (5, 0) if x_seat == 0 else (0, 5)
        records.append(_record(m, second if m.order == 2 else (0, 0), m.order))
    st = compute(config, records)
    by_name = {b.name: b for b in st.bots}
    x, y = by_name["x"].asymmetry, by_name["y"].asymmetry
    assert x is not None and y is not None
    assert (x.pairs, x.mean, x.p_value) == (8, 5.0, 1 / 256)
    assert (y.pairs, y.mean, y.p_value) == (8, -5.0, 1.0)
    assert [b.name for b in st.flagged] == ["x"]
    unknown = compute(config, [_record(r.spec, r.result.scores, None) for r in records])  # older results
    assert all(b.asymmetry is not None and b.asymmetry.pairs == 0 for b in unknown.bots)
