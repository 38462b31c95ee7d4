# The two set-up commands of the README. Each installs what it needs into .venv.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
CORE := $(VENV)/.core
STAMP := $(VENV)/.installed
# The engine tests, run a second time against the pure-Python engine (the first run uses the compiled one if built).
ENGINE_TESTS := $(wildcard tests/engine/test_engine_*.py tests/engine/test_yaku_presets.py tests/engine/test_rules_files.py \
  tests/match/test_golden.py)

.PHONY: play test test-fast lint typecheck bench clean bwrap

# `make play` needs the core only, with the pure-Python engine (no compiler run, no build environment: seconds).
# `make test` adds the test, RL and Ray extras, and compiles the engine with mypyc when a C compiler works
# (setup.py); both again when an engine source changes.
$(CORE): pyproject.toml setup.py $(wildcard referee/engine/*.py) referee/engine/_rollout.c
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip "setuptools>=68" wheel
	KOIKOI_PURE_BUILD=1 $(BIN)/python -m pip install --quiet --no-build-isolation -e .
	touch $(CORE)

# The extras' requirements (from pyproject.toml), then the package again with the compiled engine.
$(STAMP): $(CORE)
	$(BIN)/python -c "import tomllib; d = tomllib.load(open('pyproject.toml', 'rb'))['project']['optional-dependencies']; \
	  print('\n'.join(r for k in ('test', 'rl', 'ray') for r in d[k]))" > $(VENV)/extras.txt
	$(BIN)/python -m pip install --quiet -r $(VENV)/extras.txt
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $(STAMP)

## bwrap: bubblewrap for the bot sandbox, installed with apt-get where missing (never fatal: without it bots
## run unsandboxed, with a warning)
bwrap:
	@{ command -v bwrap >/dev/null 2>&1 && ldconfig -p 2>/dev/null | grep 'libseccomp\.so\.2' >/dev/null; } || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q bubblewrap libseccomp2; } >&2 || true; \
	  fi; \
	  command -v bwrap >/dev/null 2>&1 || echo "bwrap not installed: bots run without a sandbox (sudo apt-get install bubblewrap)" >&2; \
	}

## play: a match between two bundled bots, with a replay in out/
play: $(CORE) bwrap
	$(BIN)/koikoi-referee play bots/greedy_bot.py bots/random_bot.py --rules koikoi-japan --replay out/play.replay.jsonl

# Test workers of `make test` (pytest-xdist), each given whole test files (a file's shared fixtures, such as a
# Ray cluster, are made once); `make test TEST_JOBS=1` runs them one at a time.
TEST_JOBS ?= 2

## test: the whole check: tests (the engine's against both builds), mypy --strict, ruff
test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/koikoi-referee --version
	$(BIN)/python -m pytest -q -n $(TEST_JOBS) --dist loadfile
	KOIKOI_PURE_ENGINE=1 $(BIN)/python -m pytest -q -n $(TEST_JOBS) --dist loadfile $(ENGINE_TESTS)

## test-fast: the tests without the slow ones (real tournaments, sandbox batteries, Ray, browser, kits and
## packages), for the edit-test loop; `make test` runs everything
test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -m "not slow"

bench: $(STAMP)
	$(BIN)/python benchmarks/engine.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache out build referee/engine/*.so referee/engine/_compiled.json
