/* A koikoi/1 bot in C that plays a uniformly random legal action; copy it freely.
 *
 * Build: gcc -O2 -o random_bot random_bot.c   (bots/random_bot_c.sh does this on first use)
 * Run:   ./random_bot [--seed N]
 *
 * It reads one JSON object per line on stdin and writes one per line on stdout, flushed. A bot needs no full JSON
 * parser: this one walks the top-level object with a small skipper, finds "type", "id" and "legal", and copies one
 * element of "legal" verbatim into its answer.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t rng_state;

static uint64_t next_random(void) { /* xorshift64* */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ULL;
}

static const char *skip_ws(const char *p) {
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
    return p;
}

/* Skip one JSON value starting at p; return the first character after it, or NULL if malformed. */
static const char *skip_value(const char *p) {
    p = skip_ws(p);
    if (*p == '"') {
        for (p++; *p && *p != '"'; p++)
            if (*p == '\\' && *++p == '\0') return NULL;
        return *p == '"' ? p + 1 : NULL;
    }
    if (*p == '{' || *p == '[') {
        char close = *p == '{' ? '}' : ']';
        p = skip_ws(p + 1);
        if (*p == close) return p + 1;
        for (;;) {
            if (close == '}') { /* key : value */
                p = skip_value(p);
                if (!p) return NULL;
                p = skip_ws(p);
                if (*p != ':') return NULL;
                p++;
            }
            p = skip_value(p);
            if (!p) return NULL;
            p = skip_ws(p);
            if (*p == ',') { p = skip_ws(p + 1); continue; }
            return *p == close ? p + 1 : NULL;
        }
    }
    if (!*p) return NULL;
    while (*p && !strchr(",:]} \t\r\n", *p)) p++; /* number, true, false, null */
    return p;
}

typedef struct { const char *start; const char *end; } span;

/* Find the value of a top-level key (the keys koikoi/1 uses have no escapes). */
static int find_key(const char *obj, const char *key, span *out) {
    size_t klen = strlen(key);
    const char *p = skip_ws(obj);
    if (*p != '{') return 0;
    p = skip_ws(p + 1);
    while (*p == '"') {
        const char *kstart = p + 1;
        const char *kend = skip_value(p);
        if (!kend) return 0;
        p = skip_ws(kend);
        if (*p != ':') return 0;
        const char *vstart = skip_ws(p + 1);
        const char *vend = skip_value(vstart);
        if (!vend) return 0;
        if ((size_t)(kend - 1 - kstart) == klen && strncmp(kstart, key, klen) == 0) {
            out->start = vstart;
            out->end = vend;
            return 1;
        }
        p = skip_ws(vend);
        if (*p != ',') return 0;
        p = skip_ws(p + 1);
    }
    return 0;
}

static int is_string(span s, const char *text) {
    size_t n = strlen(text);
    return (size_t)(s.end - s.start) == n + 2 && s.start[0] == '"' && strncmp(s.start + 1, text, n) == 0;
}

/* Answer a request: copy the id and one random element of the legal array. */
static int answer(const char *line) {
    span id, legal;
    if (!find_key(line, "id", &id) || !find_key(line, "legal", &legal) || *legal.start != '[') return 0;
    const char *elems[256];
    const char *ends[256];
    int n = 0;
    const char *p = skip_ws(legal.start + 1);
    while (n < 256 && *p && *p != ']') {
        elems[n] = p;
        ends[n] = skip_value(p);
        if (!ends[n]) return 0;
        p = skip_ws(ends[n]);
        n++;
        if (*p == ',') p = skip_ws(p + 1);
    }
    if (n == 0) return 0;
    int k = (int)(next_random() % (uint64_t)n);
    printf("{\"type\":\"action\",\"id\":%.*s,\"action\":%.*s}\n", (int)(id.end - id.start), id.start,
           (int)(ends[k] - elems[k]), elems[k]);
    fflush(stdout);
    return 1;
}

int main(int argc, char **argv) {
    rng_state = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--seed") == 0) rng_state = strtoull(argv[i + 1], NULL, 10) * 0x9E3779B97F4A7C15ULL;
    if (rng_state == 0) rng_state = 0x9E3779B97F4A7C15ULL;

    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, stdin) != -1) {
        span type;
        if (!find_key(line, "type", &type)) {
            fprintf(stderr, "random_bot.c: cannot read: %.80s\n", line);
            continue;
        }
        if (is_string(type, "hello")) {
            printf("{\"type\":\"hello\",\"name\":\"random-c\",\"version\":\"1.0\",\"protocol\":\"koikoi/1\"}\n");
            fflush(stdout);
        } else if (is_string(type, "request")) {
            if (!answer(line)) fprintf(stderr, "random_bot.c: cannot answer: %.80s\n", line);
        } else if (is_string(type, "error")) {
            fprintf(stderr, "random_bot.c: referee error: %s", line);
        } else if (is_string(type, "bye")) {
            break;
        } /* new_match and event need no answer */
    }
    free(line);
    return 0;
}
