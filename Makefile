# arena — every target sets up what it needs from the project's own files.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed

.PHONY: setup test lint demo bench proto clean help

help:  ## list the targets
	@grep -E '^[a-z]+:.*## ' Makefile | sed 's/:.*## /\t/'

$(STAMP): pyproject.toml requirements.lock
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.lock
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	@touch $(STAMP)

setup: $(STAMP)  ## create .venv with the pinned dependencies and the project

lint: setup  ## ruff and mypy --strict
	$(BIN)/ruff check arena tests bench sample_bots
	$(BIN)/mypy arena

test: setup lint  ## lint, then the whole test suite
	$(BIN)/python -m pytest -q

demo: setup  ## a real match: four sample bots over gRPC, record under records/
	$(BIN)/arena match --seed 7 --deals 3 \
	  --bot "$(BIN)/python sample_bots/random_bot.py" \
	  --bot "$(BIN)/python sample_bots/greedy_bot.py" \
	  --bot "$(BIN)/python sample_bots/random_bot.py" \
	  --bot "$(BIN)/python sample_bots/greedy_bot.py"

bench: setup  ## benchmarks (ratios measured side by side)
	$(BIN)/python bench/rules.py

proto: setup  ## regenerate the committed protobuf code from proto/
	$(BIN)/python -m arena.server.codegen

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
