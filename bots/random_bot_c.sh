#!/bin/sh
# Run bots/c/random_bot.c, compiling it first when the binary is missing or older than the source.
# The binary is cached outside the repository, in ${XDG_CACHE_HOME:-$HOME/.cache}/koikoi-referee/ ($TMPDIR or /tmp
# stands in for an unset HOME).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src="$here/c/random_bot.c"
cache="${XDG_CACHE_HOME:-${HOME:-${TMPDIR:-/tmp}}/.cache}/koikoi-referee"
bin="$cache/random_bot_c"
if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ]; then
    mkdir -p "$cache"
    tmp="$bin.$$"
    ${CC:-gcc} -O2 -std=c99 -Wall -Wextra -o "$tmp" "$src" >&2
    mv -f "$tmp" "$bin"   # atomic: parallel first uses never run a half-written binary
fi
exec "$bin" "$@"
