# The two set-up commands of the README. Each installs what it needs into .venv.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: play test lint typecheck bench clean bwrap

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

## bwrap: bubblewrap for the bot sandbox, installed with apt-get where missing (never fatal: without it bots
## run unsandboxed, with a warning)
bwrap:
	@command -v bwrap >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q bubblewrap; } >&2 || true; \
	  fi; \
	  command -v bwrap >/dev/null 2>&1 || echo "bwrap not installed: bots run without a sandbox (sudo apt-get install bubblewrap)" >&2; \
	}

## play: a match between two bundled bots, with a replay in out/
play: $(STAMP) bwrap
	$(BIN)/koikoi-referee play bots/greedy_bot.py bots/random_bot.py --rules koikoi-japan --replay out/play.replay.jsonl

## test: the whole check: tests, mypy --strict, ruff
test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	$(BIN)/python benchmarks/engine.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache out
