# arena — every target sets up what it needs from the project's own files.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
RSTAMP  := $(VENV)/.ray-installed
ESTAMP  := $(VENV)/.env-installed
NODEBOT := sample_bots/node
NSTAMP  := $(NODEBOT)/node_modules/.installed

.PHONY: setup nodebot test lint demo bench proto clean help minimal-bot cpp-bot

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' Makefile | sed 's/:.*## /\t/'

$(STAMP): pyproject.toml requirements.lock
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.lock
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	@touch $(STAMP)

setup: $(STAMP) $(RSTAMP) $(ESTAMP) $(NSTAMP)  ## create .venv with the pinned dependencies and the project

# The optional Ray extra (arena[ray], pinned by requirements-ray.lock), so that the
# tests run `arena batch --ray local` on a real local Ray instance (~260 MB, ~45 s).
$(RSTAMP): $(STAMP) requirements-ray.lock
	$(BIN)/python -m pip install --quiet -r requirements-ray.lock
	@touch $@

# The optional PettingZoo environment extra (arena[env], pinned by requirements-env.lock),
# so that the arena.env tests run (~40 MB, a few seconds).
$(ESTAMP): $(STAMP) requirements-env.lock
	$(BIN)/python -m pip install --quiet -r requirements-env.lock
	@touch $@

# The Node sample bot's packages (pinned by its package-lock.json). Without node and
# npm this prints a note and goes on; tests/test_node_bot.py then skips.
$(NSTAMP): $(NODEBOT)/package.json $(NODEBOT)/package-lock.json
	@if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then \
	  echo "npm ci --prefix $(NODEBOT)"; \
	  npm ci --prefix $(NODEBOT) --ignore-scripts --no-audit --no-fund --loglevel=error \
	    && touch $@; \
	else \
	  echo "note: node/npm not found: skipping $(NODEBOT) (its test will be skipped)"; \
	fi

nodebot: $(NSTAMP)  ## npm ci for the Node sample bot (skipped without node/npm)

lint: setup  ## ruff and mypy --strict
	$(BIN)/ruff check arena tests bench sample_bots examples
	$(BIN)/mypy arena

test: setup lint  ## lint, then the whole test suite
	$(BIN)/python -m pytest -q

demo: $(STAMP)  ## a real match: four sample bots over gRPC, record under records/
	$(BIN)/arena match --seed 7 --record records/demo.jsonl \
	  --bot "$(BIN)/python sample_bots/random_bot.py" \
	  --bot "$(BIN)/python sample_bots/greedy_bot.py" \
	  --bot "$(BIN)/python sample_bots/random_bot.py" \
	  --bot "$(BIN)/python sample_bots/greedy_bot.py"
	@echo "replay it:  $(BIN)/arena show records/demo.jsonl | less -R"
	@echo "verify it:  $(BIN)/arena replay records/demo.jsonl --verify"

bench: setup  ## benchmarks (ratios measured side by side)
	$(BIN)/python bench/rules.py
	$(BIN)/python bench/selfplay.py
	$(BIN)/python bench/records.py
	$(BIN)/python bench/batch.py
	$(BIN)/python bench/remote.py
	$(BIN)/python bench/bots.py
	$(BIN)/python bench/tls.py
	$(BIN)/python bench/guest_pingpong.py
	$(BIN)/python bench/sandbox.py
	$(BIN)/python bench/botzone.py
	$(BIN)/python bench/env.py
	$(BIN)/python bench/http_overhead.py

proto: setup  ## regenerate the committed protobuf code from proto/
	$(BIN)/python -m arena.server.codegen

# Sample bots built from proto/ alone, as a bot in another language would be.
MINIMAL := sample_bots/minimal/gen
CPP     := sample_bots/cpp

minimal-bot: | $(STAMP)  ## stubs for sample_bots/minimal (grpcio only) from proto/
	@mkdir -p $(MINIMAL)
	$(BIN)/python -m grpc_tools.protoc -I proto/arena/v1 --python_out=$(MINIMAL) \
	  --grpc_python_out=$(MINIMAL) proto/arena/v1/arena.proto

cpp-bot:  ## build sample_bots/cpp/bot (needs libgrpc++-dev protobuf-compiler-grpc pkg-config)
	$(MAKE) -C $(CPP)

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
