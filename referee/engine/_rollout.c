/* The round loop of referee.engine.policies.play_round in C: a round played out by two policies of the family.
 *
 * Built with the compiled engine (setup.py) and used only there; the pure engine plays its rounds in Python. Every
 * constant (card kinds, months, yaku cards, the valuation's groups) comes from the Python engine through setup(), and
 * every rule and policy weight through the arguments of play(), so that the Python sources stay the one statement of
 * the rules. What this file restates is the logic of a round: legal actions (state.legal_actions), a turn
 * (state.apply), yaku points (yaku.evaluate, the path without bright_yaku_combine), a stop's total
 * (yaku.stop_total), the valuations (policies.Valuation) and the koi-koi rules (policies.cautious, never, bold,
 * cashing). A test plays rounds both ways from thousands of positions of every preset and compares them field by
 * field; the floating-point sums are made in the Python order, so equal values break ties the same way.
 *
 * play() returns the round's end and the state it left (see PLAY_DOC), or None when the position is not one it
 * plays (the Python loop then plays it). play_actions() plays the round out after each of several first actions
 * from one position and returns only each round's end (the search values a round's end by the match's scores).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

typedef unsigned long long mask_t;

static int kind_of[48];
static mask_t kind_masks[4];
static mask_t month_mask[48];
static int ngroups[48];
static mask_t group_mask[48][6];
static double group_bonus[48][6];
static int sake_card = -1;
static mask_t m_brights, m_rain, m_ribbons, m_poetry, m_blue, m_animals, m_bdb, m_chaff, m_sake, m_curtain, m_moon;
static mask_t nibble_low;
static double held_cost;
static int ready = 0;
static unsigned long long rounds_played = 0; /* rounds play() has played out: the tests' witness that it ran */

/* The rules, in the order of policies._rules_pack. */
enum {
    R_ROUNDS, R_CHOOSE3, R_MUST_MATCH, R_FIVE, R_FOUR_DRY, R_FOUR_WET, R_THREE, R_POETRY, R_BLUE, R_BOTH, R_BONUS,
    R_GROWTH, R_BDB, R_RIB_MIN, R_RIB_PTS, R_RIB_EXTRA, R_ANI_MIN, R_ANI_PTS, R_ANI_EXTRA, R_CHAFF_MIN, R_CHAFF_PTS,
    R_CHAFF_EXTRA, R_SAKE_CHAFF, R_CHERRY, R_CHERRY_AFTER, R_MOON, R_MOON_AFTER, R_SCORING, R_DOUBLE_FROM,
    R_DOUBLE_OPP, R_RISE, R_AUTO_STOP, R_CALLS_LIMIT, R_EXHAUSTED, R_TRANSFER, R_TIE_FIRST, R_COUNT
};
/* set growth: 0 none, 1 grow, 2 grow and count; scoring: 0 none, 1 double, 2 add then multiply */

#define N_FEATURES 14

typedef struct {
    double base[4];
    double groups, count, spite, sweep;
    int koikoi; /* 0 cautious, 1 never, 2 bold */
    int cashing;
    int learned; /* 1: the card play is policies.Learned's, with weights w (policies.FEATURES) */
    double w[N_FEATURES];
} policy_t;

typedef struct {
    long r[R_COUNT];
    int round, dealer, first_dealer;
    long scores[2];
    int phase; /* 0 play, 1 draw choice, 2 koi-koi */
    int to_move, turn, pending;
    mask_t hands[2], field, captured[2];
    long koikoi[2], last_points[2];
    long last_names[2];
    int stock[48];
    int stock_len, stock_pos;
} round_t;

enum { PH_PLAY = 0, PH_DRAW_CHOICE = 1, PH_KOIKOI = 2 };
enum { END_STOP = 0, END_AUTO_STOP = 1, END_EXHAUSTED = 2 };

static inline int popcount(mask_t m) { return __builtin_popcountll(m); }

/* Yaku name bits, as yaku._BIT numbers them (the order of the Yaku enum). */
enum {
    Y_FIVE = 1 << 0, Y_FOUR_DRY = 1 << 1, Y_FOUR_WET = 1 << 2, Y_THREE = 1 << 3, Y_POETRY = 1 << 4, Y_BLUE = 1 << 5,
    Y_BONUS = 1 << 6, Y_BOTH = 1 << 7, Y_BDB = 1 << 8, Y_RIBBONS = 1 << 9, Y_ANIMALS = 1 << 10, Y_CHAFF = 1 << 11,
    Y_CHERRY = 1 << 12, Y_MOON = 1 << 13
};

/* yaku.evaluate without bright_yaku_combine: the base points, and the names in *names. */
static long evaluate(const long *r, mask_t captured, long calls, long *names_out) {
    long base = 0, names = 0, pts;
    mask_t b = captured & m_brights;
    if (b) {
        int n = popcount(b);
        long bit = 0;
        pts = 0;
        if (n == 5) { pts = r[R_FIVE]; bit = Y_FIVE; }
        else if (n == 4) {
            if (b & m_rain) { pts = r[R_FOUR_WET]; bit = Y_FOUR_WET; } else { pts = r[R_FOUR_DRY]; bit = Y_FOUR_DRY; }
        } else if (n == 3 && !(b & m_rain)) { pts = r[R_THREE]; bit = Y_THREE; }
        if (pts) { base += pts; names |= bit; }
    }
    mask_t rb = captured & m_ribbons;
    if (rb) {
        int poetry = (rb & m_poetry) == m_poetry, blue = (rb & m_blue) == m_blue;
        mask_t held = 0;
        if (poetry && blue && r[R_BOTH]) {
            base += r[R_BOTH]; names |= Y_BOTH; held = m_poetry | m_blue;
        } else {
            if (poetry && r[R_POETRY]) { base += r[R_POETRY]; names |= Y_POETRY; held = m_poetry; }
            if (blue && r[R_BLUE]) { base += r[R_BLUE]; names |= Y_BLUE; held |= m_blue; }
        }
        if (held && r[R_GROWTH] != 0) base += popcount(rb & ~held);
        if (poetry && blue && r[R_BONUS]) { base += r[R_BONUS]; names |= Y_BONUS; }
        int n = popcount(rb);
        if (n >= r[R_RIB_MIN] && !(held && r[R_GROWTH] == 1)) {
            pts = r[R_RIB_PTS] + (n - r[R_RIB_MIN]) * r[R_RIB_EXTRA];
            if (pts) { base += pts; names |= Y_RIBBONS; }
        }
    }
    mask_t animals = captured & m_animals;
    int bdb = (animals & m_bdb) == m_bdb && r[R_BDB] > 0;
    if (bdb) {
        base += r[R_BDB]; names |= Y_BDB;
        if (r[R_GROWTH] != 0) base += popcount(animals & ~m_bdb);
    }
    int n = popcount(animals);
    if (n >= r[R_ANI_MIN] && !(bdb && r[R_GROWTH] == 1)) {
        pts = r[R_ANI_PTS] + (n - r[R_ANI_MIN]) * r[R_ANI_EXTRA];
        if (pts) { base += pts; names |= Y_ANIMALS; }
    }
    mask_t sake = captured & m_sake;
    n = popcount(captured & m_chaff) + ((sake && r[R_SAKE_CHAFF]) ? 1 : 0);
    if (n >= r[R_CHAFF_MIN]) {
        pts = r[R_CHAFF_PTS] + (n - r[R_CHAFF_MIN]) * r[R_CHAFF_EXTRA];
        if (pts) { base += pts; names |= Y_CHAFF; }
    }
    if (sake) {
        if (captured & m_curtain) {
            pts = r[R_CHERRY] ? (calls ? r[R_CHERRY_AFTER] : r[R_CHERRY]) : 0;
            if (pts) { base += pts; names |= Y_CHERRY; }
        }
        if (captured & m_moon) {
            pts = r[R_MOON] ? (calls ? r[R_MOON_AFTER] : r[R_MOON]) : 0;
            if (pts) { base += pts; names |= Y_MOON; }
        }
    }
    if (names_out) *names_out = names;
    return base;
}

/* yaku.stop_total */
static long stop_total(const long *r, long base, long calls, long opponent_calls) {
    if (!base) return 0;
    long total = base;
    if (r[R_SCORING] == 1) total = base << calls;
    else if (r[R_SCORING] == 2) total = calls <= 3 ? base + calls : base * (calls - 2);
    if (r[R_DOUBLE_FROM] && total >= r[R_DOUBLE_FROM]) total *= 2;
    if (opponent_calls && r[R_DOUBLE_OPP]) total *= 2;
    return total;
}

/* policies.Valuation.value, worth and play_value */
static double value(const policy_t *v, int c, mask_t mine) {
    int k = kind_of[c];
    double x = v->base[k] + (c == sake_card ? 4.0 : 0.0);
    for (int i = 0; i < ngroups[c]; i++) x += v->groups * group_bonus[c][i] * (double)popcount(group_mask[c][i] & mine);
    if (k) x += v->count * (double)popcount(mine & kind_masks[k]);
    return x;
}

static double worth(const policy_t *v, int c, mask_t mine, mask_t theirs) {
    double x = value(v, c, mine);
    return v->spite != 0.0 ? x + v->spite * value(v, c, theirs) : x;
}

static double play_value(const policy_t *v, int c, int target, mask_t field, mask_t hand, mask_t mine,
                         mask_t theirs) {
    mask_t taken = target >= 0 ? (1ULL << target) : (field & month_mask[c]);
    if (!taken) return -worth(v, c, mine, theirs) - held_cost * (double)(popcount(hand & month_mask[c]) - 1);
    double x = 2.0 + worth(v, c, mine, theirs) + v->sweep;
    while (taken) {
        int low = __builtin_ctzll(taken);
        taken &= taken - 1;
        x += worth(v, low, mine, theirs) + v->sweep;
    }
    return x;
}

/* policies.Learned: the greedy valuation, the sets of policies._GOALS and the score of an action. */
static policy_t greedy_valuation; /* policies.GREEDY, from setup() */
#define N_GOALS 9
static mask_t goal_mask[N_GOALS];
static int goal_need[N_GOALS]; /* policies._GOALS, from setup() */
static mask_t all_cards;

/* policies._goals */
static double goals(mask_t x, mask_t y, int *done, int *near) {
    double v = 0.0;
    *done = 0;
    *near = 0;
    for (int i = 0; i < N_GOALS; i++) {
        int need = goal_need[i], have = popcount(goal_mask[i] & x);
        if (have >= need) {
            (*done)++;
        } else if (popcount(goal_mask[i] & ~y) >= need) {
            v += 1.0 / (double)(need - have + 1);
            if (need - have == 1) (*near)++;
        }
    }
    return v;
}

/* What policies.play_features reads of a decision before any action, the same for each of its actions
 * (policies.Decision). */
typedef struct {
    mask_t hand, field, mine, theirs, unseen;
    int pending, d0, on0;
    double late, pv0, ov0, called;
} decision_t;

static void learned_decision(decision_t *x, mask_t hand, mask_t field, mask_t mine, mask_t theirs, int pending,
                             long their_calls) {
    int ignored;
    x->hand = hand;
    x->field = field;
    x->mine = mine;
    x->theirs = theirs;
    x->pending = pending;
    x->unseen = all_cards & ~(hand | field | mine | theirs | (pending >= 0 ? 1ULL << pending : 0));
    x->late = 1.0 - (double)popcount(hand) / 8.0;
    x->pv0 = goals(mine, theirs, &x->d0, &ignored);
    x->ov0 = goals(theirs, mine, &ignored, &x->on0);
    x->called = their_calls ? 1.0 : 0.0;
}

/* The weighted sum of policies.play_features of playing c (capturing t) or, with a drawn card (x->pending), of
 * capturing t with it (c = the drawn card). */
static double learned_score(const policy_t *v, const decision_t *x, int c, int t) {
    int d, on, ignored;
    mask_t month = month_mask[c], taken, left, hand = x->hand, field = x->field, mine = x->mine, theirs = x->theirs;
    double g;
    if (x->pending >= 0) {
        g = worth(&greedy_valuation, t, mine, theirs);
        taken = (1ULL << c) | (1ULL << t);
        left = field & ~taken;
    } else {
        g = play_value(&greedy_valuation, c, t, field, hand, mine, theirs);
        taken = t >= 0 ? ((1ULL << c) | (1ULL << t)) : ((field & month) ? ((1ULL << c) | (field & month)) : 0);
        left = taken ? (field & ~taken) : (field | (1ULL << c));
        hand &= ~(1ULL << c);
    }
    mask_t mine2 = mine | taken;
    double pv = goals(mine2, theirs, &d, &ignored);
    double ov = goals(theirs, mine2, &ignored, &on);
    int unseen_month = popcount(x->unseen & month);
    double expose = 0.0;
    if (unseen_month) {
        mask_t rest = left & month;
        while (rest) {
            int y = __builtin_ctzll(rest);
            rest &= rest - 1;
            expose += value(&greedy_valuation, y, theirs);
        }
        expose /= 10.0;
    }
    double discard = taken ? 0.0 : 1.0;
    double keep = (hand & month) ? 1.0 : 0.0;
    double f[N_FEATURES] = {g / 10.0, discard, (double)popcount(taken) / 2.0, (double)(d - x->d0), pv - x->pv0,
                            x->ov0 - ov, expose, expose * (double)unseen_month / 3.0, discard * keep,
                            (1.0 - discard) * keep, (double)(d - x->d0) * x->called, (pv - x->pv0) * x->late,
                            expose * x->late, (double)(x->on0 - on)};
    double score = 0.0;
    for (int i = 0; i < N_FEATURES; i++) score += v->w[i] * f[i];
    return score;
}

/* The rules' end of a round in the last round: whether p, stopping now, wins the match (policies.stop_wins). */
static int stop_wins(const round_t *s, int p) {
    if (s->round < s->r[R_ROUNDS]) return 0;
    long base = evaluate(s->r, s->captured[p], s->koikoi[p], NULL);
    long total = stop_total(s->r, base, s->koikoi[p], s->koikoi[1 - p]);
    long a = s->scores[0], b = s->scores[1];
    if (total) {
        long loss = s->r[R_TRANSFER] ? total : 0;
        if (p == 0) { a += total; b -= loss; } else { a -= loss; b += total; }
    }
    int winner;
    if (a != b) winner = a > b ? 0 : 1;
    else winner = s->r[R_TIE_FIRST] ? s->first_dealer : -1;
    return winner == p;
}

static int last_round_ahead(const round_t *s, int p) {
    return s->round >= s->r[R_ROUNDS] && s->scores[p] > s->scores[1 - p];
}

/* policies.cautious, never, bold, and cashing(rule) */
static int calls_koikoi(const policy_t *v, const round_t *s, int p) {
    int call;
    if (v->koikoi == 1) call = 0;
    else if (v->koikoi == 2) call = !last_round_ahead(s, p) && popcount(s->hands[p]) >= 2;
    else {
        call = 1;
        if (last_round_ahead(s, p)) call = 0;
        else if (popcount(s->hands[p]) < 5) call = 0;
        else {
            long base = evaluate(s->r, s->captured[p], s->koikoi[p], NULL);
            if (stop_total(s->r, base, s->koikoi[p], 0) >= 7) call = 0;
            else {
                mask_t opp = s->captured[1 - p];
                if (evaluate(s->r, opp, s->koikoi[1 - p], NULL) > 0) call = 0;
                else call = !(popcount(opp & m_brights) >= 2 || popcount(opp) >= 10);
            }
        }
    }
    return call && v->cashing ? !stop_wins(s, p) : call;
}

/* The end of the round: winner (-1 none), points, reason. */
typedef struct { int winner; long points; int reason; } end_t;

static void do_stop(round_t *s, int p, int reason, end_t *end) {
    long base = evaluate(s->r, s->captured[p], s->koikoi[p], NULL);
    end->winner = p;
    end->points = stop_total(s->r, base, s->koikoi[p], s->koikoi[1 - p]);
    end->reason = reason;
}

/* state._next_turn; returns 1 when the round ended */
static int next_turn(round_t *s, int p, end_t *end) {
    if (!s->hands[0] && !s->hands[1]) {
        long pts = s->r[R_EXHAUSTED];
        end->winner = pts ? s->dealer : -1;
        end->points = pts;
        end->reason = END_EXHAUSTED;
        return 1;
    }
    s->turn += 1;
    s->to_move = 1 - p;
    s->phase = PH_PLAY;
    return 0;
}

/* state._end_turn */
static int end_turn(round_t *s, int p, end_t *end) {
    long names;
    long base = evaluate(s->r, s->captured[p], s->koikoi[p], &names);
    int rise = s->r[R_RISE] ? base > s->last_points[p] : (names & ~s->last_names[p]) != 0;
    s->last_points[p] = base;
    s->last_names[p] = names;
    if (rise) {
        int last = s->hands[p] == 0;
        if (last && s->r[R_AUTO_STOP]) { do_stop(s, p, END_AUTO_STOP, end); return 1; }
        long limit = s->r[R_CALLS_LIMIT];
        if (limit && s->koikoi[0] + s->koikoi[1] >= limit) { do_stop(s, p, END_AUTO_STOP, end); return 1; }
        s->phase = PH_KOIKOI;
        s->to_move = p;
        return 0;
    }
    return next_turn(s, p, end);
}

#define MAX_LEGAL 32

/* state.legal_actions in the PLAY phase, in its order (by card, then target); returns the count, -1 if too many */
static int legal_plays(const round_t *s, int *cards, int *targets) {
    mask_t hand = s->hands[s->to_move], field = s->field;
    int n = 0;
    mask_t h = hand;
    while (h) {
        int c = __builtin_ctzll(h);
        h &= h - 1;
        mask_t m = field & month_mask[c];
        int k = popcount(m);
        if (k == 2 || (k == 3 && s->r[R_CHOOSE3])) {
            while (m) {
                if (n >= MAX_LEGAL) return -1;
                cards[n] = c; targets[n] = __builtin_ctzll(m); n++;
                m &= m - 1;
            }
        } else {
            if (n >= MAX_LEGAL) return -1;
            cards[n] = c; targets[n] = -1; n++;
        }
    }
    if (s->r[R_MUST_MATCH]) {
        mask_t months = ((hand | hand >> 1 | hand >> 2 | hand >> 3) & nibble_low) * 15;
        if (field & months) {
            int k = 0;
            for (int i = 0; i < n; i++)
                if (field & month_mask[cards[i]]) { cards[k] = cards[i]; targets[k] = targets[i]; k++; }
            n = k;
        }
    }
    return n;
}

/* Actions forced on play_out's first step (play_actions): kinds as policies._ACTION_CODE numbers them. */
enum { A_PLAY = 0, A_CHOOSE = 1, A_KOIKOI = 2, A_STOP = 3 };

/* Plays the round out; returns 0 with *end set, -1 when the position cannot be played here. With ``forced`` (kind,
 * card, target), the first step is that action instead of the policy's; 1 when the round ends in that step (with *end
 * set: the caller lets the engine play that case, where apply deals the next round). */
static int play_out(round_t *s, int me, const policy_t *pol[2], end_t *end, const int *forced) {
    int cards[MAX_LEGAL], targets[MAX_LEGAL];
    for (int guard = 0; guard < 200; guard++) {
        int p = s->to_move;
        const policy_t *v = pol[p == me ? 0 : 1];
        mask_t mine = s->captured[p], theirs = s->captured[1 - p];
        const int *f = forced;
        int ended = f ? 1 : 0; /* what a round's end in this step returns */
        forced = NULL;
        if (s->phase == PH_KOIKOI) {
            if (f && f[0] != A_KOIKOI && f[0] != A_STOP) return -1;
            if (f ? f[0] == A_KOIKOI : calls_koikoi(v, s, p)) {
                long calls = s->koikoi[p] + 1;
                s->koikoi[p] = calls;
                s->last_points[p] = evaluate(s->r, s->captured[p], calls, NULL);
                if (next_turn(s, p, end)) return ended;
            } else {
                do_stop(s, p, END_STOP, end);
                return ended;
            }
            continue;
        }
        if (s->phase == PH_DRAW_CHOICE) {
            if (s->pending < 0 || s->pending >= 48) return -1;
            mask_t m = s->field & month_mask[s->pending];
            if (!m) return -1;
            int best = __builtin_ctzll(m);
            if (f) {
                if (f[0] != A_CHOOSE || f[2] < 0 || f[2] >= 48 || !(m >> f[2] & 1)) return -1;
                best = f[2];
            } else if (popcount(m) > 1 && v->learned) {
                double best_v = -1e300;
                decision_t here;
                learned_decision(&here, s->hands[p], s->field, mine, theirs, s->pending, s->koikoi[1 - p]);
                mask_t rest = m;
                while (rest) {
                    int t = __builtin_ctzll(rest);
                    rest &= rest - 1;
                    double x = learned_score(v, &here, s->pending, t);
                    if (x > best_v) { best = t; best_v = x; }
                }
            } else if (popcount(m) > 1) {
                double best_v = worth(v, best, mine, theirs);
                mask_t rest = m & (m - 1);
                while (rest) {
                    int t = __builtin_ctzll(rest);
                    rest &= rest - 1;
                    double x = worth(v, t, mine, theirs);
                    if (x > best_v) { best = t; best_v = x; }
                }
            }
            mask_t took = (1ULL << s->pending) | (1ULL << best);
            s->field &= ~took;
            s->captured[p] |= took;
            s->pending = -1;
            if (end_turn(s, p, end)) return ended;
            continue;
        }
        /* the PLAY phase */
        int n = legal_plays(s, cards, targets);
        if (n <= 0) return -1;
        int c = cards[0], t = targets[0];
        if (f) {
            int i = 0;
            while (i < n && !(f[0] == A_PLAY && cards[i] == f[1] && targets[i] == f[2])) i++;
            if (i == n) return -1; /* not a legal action here */
            c = cards[i];
            t = targets[i];
        } else if (n > 1) {
            mask_t field = s->field, hand = s->hands[p];
            double best_v = v->learned ? -1e300 : -1e9;
            decision_t here;
            if (v->learned) learned_decision(&here, hand, field, mine, theirs, -1, s->koikoi[1 - p]);
            for (int i = 0; i < n; i++) {
                double x = v->learned ? learned_score(v, &here, cards[i], targets[i])
                                      : play_value(v, cards[i], targets[i], field, hand, mine, theirs);
                if (x > best_v) { c = cards[i]; t = targets[i]; best_v = x; }
            }
        }
        /* state._apply_play */
        mask_t bit = 1ULL << c, field = s->field, took;
        mask_t m = field & month_mask[c];
        if (m) {
            int k = popcount(m);
            took = (k == 2 || (k == 3 && s->r[R_CHOOSE3])) ? (bit | (1ULL << t)) : (bit | m);
            field &= ~took;
        } else {
            took = 0;
            field |= bit;
        }
        s->hands[p] &= ~bit;
        if (s->stock_pos >= s->stock_len) return -1;
        int d = s->stock[s->stock_pos++];
        mask_t dbit = 1ULL << d;
        m = field & month_mask[d];
        mask_t drew;
        if (!m) {
            s->field = field | dbit;
            drew = 0;
        } else {
            int k = popcount(m);
            if (k == 2 || (k == 3 && s->r[R_CHOOSE3])) {
                s->field = field;
                s->captured[p] |= took;
                s->pending = d;
                s->phase = PH_DRAW_CHOICE;
                continue;
            }
            s->field = field & ~m;
            drew = dbit | m;
        }
        took |= drew;
        if (took) {
            s->captured[p] |= took;
            if (end_turn(s, p, end)) return ended;
        } else if (next_turn(s, p, end)) {
            return ended;
        }
    }
    return -1;
}

static int read_policy(PyObject *t, policy_t *v) {
    PyObject *w;
    if (!PyArg_ParseTuple(t, "(dddd)ddddiiO!", &v->base[0], &v->base[1], &v->base[2], &v->base[3], &v->groups,
                          &v->count, &v->spite, &v->sweep, &v->koikoi, &v->cashing, &PyTuple_Type, &w))
        return 0;
    Py_ssize_t n = PyTuple_GET_SIZE(w);
    if (n != 0 && n != N_FEATURES) {
        PyErr_Format(PyExc_ValueError, "a learned play takes %d weights, not %zd", N_FEATURES, n);
        return 0;
    }
    v->learned = n != 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        v->w[i] = PyFloat_AsDouble(PyTuple_GET_ITEM(w, i));
        if (PyErr_Occurred()) return 0;
    }
    return 1;
}

#define PLAY_DOC \
    "play(rules, policies, me, position, stock) -> tuple | None\n\n" \
    "A round played out: ``rules`` and ``policies`` (mine, theirs) as packed by referee.engine.policies; ``position``" \
    " = (round, dealer, first_dealer, score0, score1, phase, to_move, turn, pending, hand0, hand1, field, captured0," \
    " captured1, koikoi0, koikoi1, last_points0, last_points1, last_names0, last_names1, stock_pos). Returns" \
    " (winner or -1, points, reason, phase, to_move, turn, pending, hand0, hand1, field, captured0, captured1," \
    " koikoi0, koikoi1, last_points0, last_points1, last_names0, last_names1, stock_pos), or None."

/* The arguments play() and play_actions() share: the rules and the position; 1 when read, 0 with an exception
 * set, -1 when the position is not one this loop plays. */
static int read_round(PyObject *rules, int me, PyObject *position, PyObject *stock, round_t *s) {
    if (!ready) {
        PyErr_SetString(PyExc_RuntimeError, "_rollout.setup() was not called");
        return 0;
    }
    if (PyTuple_GET_SIZE(rules) != R_COUNT) {
        PyErr_SetString(PyExc_ValueError, "rules: wrong length");
        return 0;
    }
    for (int i = 0; i < R_COUNT; i++) {
        s->r[i] = PyLong_AsLong(PyTuple_GET_ITEM(rules, i));
        if (s->r[i] == -1 && PyErr_Occurred()) return 0;
    }
    if (!PyArg_ParseTuple(position, "iiillii" "iiKKKKKlllllli", &s->round, &s->dealer, &s->first_dealer,
                          &s->scores[0], &s->scores[1], &s->phase, &s->to_move, &s->turn, &s->pending, &s->hands[0],
                          &s->hands[1], &s->field, &s->captured[0], &s->captured[1], &s->koikoi[0], &s->koikoi[1],
                          &s->last_points[0], &s->last_points[1], &s->last_names[0], &s->last_names[1],
                          &s->stock_pos))
        return 0;
    Py_ssize_t len = PyTuple_GET_SIZE(stock);
    if (len > 48 || s->stock_pos < 0 || s->stock_pos > len || me < 0 || me > 1 || s->to_move < 0 || s->to_move > 1 ||
        s->phase < 0 || s->phase > 2)
        return -1;
    s->stock_len = (int)len;
    for (Py_ssize_t i = 0; i < len; i++) {
        long d = PyLong_AsLong(PyTuple_GET_ITEM(stock, i));
        if (d == -1 && PyErr_Occurred()) return 0;
        if (d < 0 || d >= 48) return -1;
        s->stock[i] = (int)d;
    }
    return 1;
}

static PyObject *play(PyObject *self, PyObject *args) {
    PyObject *rules, *policies, *position, *stock;
    int me;
    if (!PyArg_ParseTuple(args, "O!O!iO!O!", &PyTuple_Type, &rules, &PyTuple_Type, &policies, &me, &PyTuple_Type,
                          &position, &PyTuple_Type, &stock))
        return NULL;
    round_t s;
    policy_t mine, theirs;
    PyObject *pm, *pt;
    if (!PyArg_ParseTuple(policies, "OO", &pm, &pt) || !read_policy(pm, &mine) || !read_policy(pt, &theirs))
        return NULL;
    int read = read_round(rules, me, position, stock, &s);
    if (read == 0) return NULL;
    if (read < 0) Py_RETURN_NONE;
    const policy_t *pol[2] = {&mine, &theirs};
    end_t end;
    if (play_out(&s, me, pol, &end, NULL) != 0) Py_RETURN_NONE;
    rounds_played++;
    return Py_BuildValue("(iliiiii" "KKKKKlllllli)", end.winner, end.points, end.reason, s.phase, s.to_move, s.turn,
                         s.pending, s.hands[0], s.hands[1], s.field, s.captured[0], s.captured[1], s.koikoi[0],
                         s.koikoi[1], s.last_points[0], s.last_points[1], s.last_names[0], s.last_names[1],
                         s.stock_pos);
}

#define MAX_OPPONENTS 8

#define PLAY_ACTIONS_DOC \
    "play_actions(rules, policies, me, position, stock, actions) -> tuple | None\n\n" \
    "The round played out after each of ``actions`` ((kind, card, target, opponent) each: kind 0 play, 1 capture" \
    " choice, 2 koi-koi, 3 stop; the other seat played by policies[1 + opponent]), ``policies`` = (mine, theirs," \
    " ...) with at most 8 of the other seat's, the arguments otherwise as play()'s. Returns, for each action, the" \
    " round's end (winner or -1, points, reason), or None where that action itself ends the round (or is not legal" \
    " there); None when the position is not one this loop plays."

static PyObject *play_actions(PyObject *self, PyObject *args) {
    PyObject *rules, *policies, *position, *stock, *actions;
    int me;
    if (!PyArg_ParseTuple(args, "O!O!iO!O!O!", &PyTuple_Type, &rules, &PyTuple_Type, &policies, &me, &PyTuple_Type,
                          &position, &PyTuple_Type, &stock, &PyTuple_Type, &actions))
        return NULL;
    Py_ssize_t npol = PyTuple_GET_SIZE(policies);
    if (npol < 2 || npol > 1 + MAX_OPPONENTS) {
        PyErr_SetString(PyExc_ValueError, "policies: mine and 1 to 8 of the other seat's");
        return NULL;
    }
    policy_t pols[1 + MAX_OPPONENTS];
    for (Py_ssize_t i = 0; i < npol; i++)
        if (!read_policy(PyTuple_GET_ITEM(policies, i), &pols[i])) return NULL;
    round_t start;
    int read = read_round(rules, me, position, stock, &start);
    if (read == 0) return NULL;
    if (read < 0) Py_RETURN_NONE;
    Py_ssize_t n = PyTuple_GET_SIZE(actions);
    PyObject *out = PyTuple_New(n);
    if (!out) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        int forced[3], opponent;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(actions, i), "iiii", &forced[0], &forced[1], &forced[2], &opponent)) {
            Py_DECREF(out);
            return NULL;
        }
        if (opponent < 0 || opponent >= npol - 1) {
            Py_DECREF(out);
            PyErr_SetString(PyExc_ValueError, "actions: no such opponent policy");
            return NULL;
        }
        const policy_t *pol[2] = {&pols[0], &pols[1 + opponent]};
        round_t s = start;
        end_t end;
        int got = play_out(&s, me, pol, &end, forced);
        PyObject *item;
        if (got == 0) {
            rounds_played++;
            item = Py_BuildValue("(ili)", end.winner, end.points, end.reason);
            if (!item) {
                Py_DECREF(out);
                return NULL;
            }
        } else {
            item = Py_None;
            Py_INCREF(item);
        }
        PyTuple_SET_ITEM(out, i, item);
    }
    return out;
}

static int read_mask(PyObject *d, const char *key, mask_t *out) {
    PyObject *x = PyDict_GetItemString(d, key);
    if (!x) {
        PyErr_Format(PyExc_KeyError, "setup: %s", key);
        return 0;
    }
    *out = PyLong_AsUnsignedLongLong(x);
    return !PyErr_Occurred();
}

static PyObject *setup(PyObject *self, PyObject *args) {
    PyObject *consts, *kinds, *months, *groups;
    if (!PyArg_ParseTuple(args, "O!O!O!O!", &PyDict_Type, &consts, &PyTuple_Type, &kinds, &PyTuple_Type, &months,
                          &PyTuple_Type, &groups))
        return NULL;
    if (PyTuple_GET_SIZE(kinds) != 48 || PyTuple_GET_SIZE(months) != 48 || PyTuple_GET_SIZE(groups) != 48) {
        PyErr_SetString(PyExc_ValueError, "setup: 48 cards expected");
        return NULL;
    }
    if (!read_mask(consts, "brights", &m_brights) || !read_mask(consts, "rain", &m_rain) ||
        !read_mask(consts, "ribbons", &m_ribbons) || !read_mask(consts, "poetry", &m_poetry) ||
        !read_mask(consts, "blue", &m_blue) || !read_mask(consts, "animals", &m_animals) ||
        !read_mask(consts, "bdb", &m_bdb) || !read_mask(consts, "chaff", &m_chaff) ||
        !read_mask(consts, "sake", &m_sake) || !read_mask(consts, "curtain", &m_curtain) ||
        !read_mask(consts, "moon", &m_moon) || !read_mask(consts, "nibble_low", &nibble_low))
        return NULL;
    sake_card = __builtin_ctzll(m_sake);
    PyObject *goals = PyDict_GetItemString(consts, "goals"), *greedy = PyDict_GetItemString(consts, "greedy");
    if (!goals || !greedy || !PyTuple_Check(goals) || PyTuple_GET_SIZE(goals) != N_GOALS) {
        PyErr_SetString(PyExc_ValueError, "setup: goals (9 of them) and greedy");
        return NULL;
    }
    for (int i = 0; i < N_GOALS; i++) {
        unsigned long long gm;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(goals, i), "Ki", &gm, &goal_need[i])) return NULL;
        goal_mask[i] = gm;
    }
    if (!read_policy(greedy, &greedy_valuation)) return NULL;
    all_cards = (1ULL << 48) - 1;
    PyObject *held = PyDict_GetItemString(consts, "held");
    if (!held) {
        PyErr_SetString(PyExc_KeyError, "setup: held");
        return NULL;
    }
    held_cost = PyFloat_AsDouble(held);
    if (PyErr_Occurred()) return NULL;
    for (int k = 0; k < 4; k++) kind_masks[k] = 0;
    for (int c = 0; c < 48; c++) {
        kind_of[c] = (int)PyLong_AsLong(PyTuple_GET_ITEM(kinds, c));
        month_mask[c] = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(months, c));
        if (PyErr_Occurred()) return NULL;
        if (kind_of[c] < 0 || kind_of[c] > 3) {
            PyErr_SetString(PyExc_ValueError, "setup: a kind out of range");
            return NULL;
        }
        kind_masks[kind_of[c]] |= 1ULL << c;
        PyObject *g = PyTuple_GET_ITEM(groups, c);
        if (!PyTuple_Check(g) || PyTuple_GET_SIZE(g) > 6) {
            PyErr_SetString(PyExc_ValueError, "setup: groups");
            return NULL;
        }
        ngroups[c] = (int)PyTuple_GET_SIZE(g);
        for (int i = 0; i < ngroups[c]; i++) {
            unsigned long long gm;
            if (!PyArg_ParseTuple(PyTuple_GET_ITEM(g, i), "Kd", &gm, &group_bonus[c][i])) return NULL;
            group_mask[c][i] = gm;
        }
    }
    ready = 1;
    Py_RETURN_NONE;
}

static PyObject *played(PyObject *self, PyObject *unused) { return PyLong_FromUnsignedLongLong(rounds_played); }

static PyMethodDef methods[] = {
    {"setup", setup, METH_VARARGS, "setup(constants, kinds, month_masks, card_groups): the engine's card tables."},
    {"play", play, METH_VARARGS, PLAY_DOC},
    {"play_actions", play_actions, METH_VARARGS, PLAY_ACTIONS_DOC},
    {"played", played, METH_NOARGS, "played() -> int: the rounds play() has played out in this process."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_rollout", "The round loop of play_round, in C.", -1,
                                    methods};

PyMODINIT_FUNC PyInit__rollout(void) { return PyModule_Create(&module); }
