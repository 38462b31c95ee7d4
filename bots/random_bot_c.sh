#!/bin/sh
# Run bots/c/random_bot.c, compiling it first when the binary is missing or older than the source.
# Usage: random_bot_c.sh [SOURCE.c] [BOT OPTIONS...]. The source defaults to c/random_bot.c beside this script;
# name it on the command line when the bot runs in the referee's sandbox, which makes readable only the files
# named on a bot's command line (not the folder of its program):
#   koikoi-referee play "bots/random_bot_c.sh bots/c/random_bot.c" bots/greedy_bot.py
# The binary is cached outside the repository, in ${XDG_CACHE_HOME:-$HOME/.cache}/koikoi-referee/ ($TMPDIR or /tmp
# stands in for an unset HOME).
set -eu
case "${1:-}" in
    *.c) src=$1; shift ;;
    *) src="$(cd "$(dirname "$0")" && pwd)/c/random_bot.c" ;;
esac
if [ ! -r "$src" ]; then
    echo "random_bot_c.sh: cannot read $src (in a sandbox, name the source: random_bot_c.sh bots/c/random_bot.c)" >&2
    exit 1
fi
cache="${XDG_CACHE_HOME:-${HOME:-${TMPDIR:-/tmp}}/.cache}/koikoi-referee"
bin="$cache/random_bot_c"
if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ]; then
    mkdir -p "$cache"
    tmp="$bin.$$"
    ${CC:-gcc} -O2 -std=c99 -Wall -Wextra -o "$tmp" "$src" >&2
    mv -f "$tmp" "$bin"   # atomic: parallel first uses never run a half-written binary
fi
exec "$bin" "$@"
