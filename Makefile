# The two set-up commands of the README. Each installs what it needs into .venv.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The engine tests, run a second time against the pure-Python engine (the first run uses the compiled one if built).
ENGINE_TESTS := $(wildcard tests/test_engine_*.py tests/test_yaku_presets.py tests/test_rules_files.py tests/test_golden.py)

.PHONY: play test lint typecheck bench clean

# The install compiles the engine with mypyc when a C compiler works (setup.py): again when an engine source changes.
$(STAMP): pyproject.toml setup.py $(wildcard referee/engine/*.py)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

## play: a match between two bundled bots, with a replay in out/
play: $(STAMP)
	$(BIN)/koikoi-referee play bots/greedy_bot.py bots/random_bot.py --rules koikoi-japan --replay out/play.replay.jsonl

## test: the whole check: tests (the engine's against both builds), mypy --strict, ruff
test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/koikoi-referee --version
	$(BIN)/python -m pytest -q
	KOIKOI_PURE_ENGINE=1 $(BIN)/python -m pytest -q $(ENGINE_TESTS)

bench: $(STAMP)
	$(BIN)/python benchmarks/engine.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache out build referee/engine/*.so referee/engine/_compiled.json
