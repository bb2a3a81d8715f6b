# Position in Attention: one entry point for building, testing and reading the book.
#
#   make book    build the website into _build/html (creates .venv on first use; cached execution)
#   make test    every test: posenc unit/property tests and notebook checks, a clean build with
#                every notebook executed in a fresh kernel and warnings as errors, its claims ledger,
#                every chapter again with shifted seeds, chapters run outside the
#                repository, a real-browser check of the built site, the student edition, the
#                PDF editions and the nbgrader course graded end to end
#   make lab     JupyterLab on the notebooks, with the book's environment as kernel
#   make bench   the RoPE timing table, the attention layer's training-path speed, the time of
#                make train estimated from per-step times measured on this machine, and the
#                chapters' execution times of the last clean build against their budget
#   make train   train the book's stored models that are missing or stale (ONLY=<pattern>, TRAIN_JOBS=n)
#   make student the student edition: the site and the notebooks without solutions (_build/student)
#   make pdf     the PDF editions, full and student, printed from the built sites (_build/pdf)
#   make assignments  an nbgrader course from the chapters' coding exercises (_build/assignments)

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed
BROWSER := /usr/bin/chromium
BUILD_FLAGS := -W -n --keep-going
TEST_OUTPUT := _build/test
STUDENT_OUTPUT := _build/student
# Per chapter, in the clean build on this machine: reported by every build, failing only make bench
# (a wall time depends on the machine and its load; no test fails on one).
NOTEBOOK_BUDGET_SECONDS := 40
# The claims ledger (posenc.claims): every claim the chapters state, as data.
CLAIMS := _build/claims.json
TEST_CLAIMS := $(TEST_OUTPUT)/claims.json
SEED_CLAIMS := $(TEST_OUTPUT)/claims-seeds.json
# No stored model trains in the build (chapter 2's small demonstration runs aside): every model
# chapters 4, 8 and 9 show comes from the model store (`make train`).
# A progress bar writes to stderr, and any stderr output fails a build.
# POSENC_BOOK_BUILD: interactive figures are glued for their captions (posenc.interactive.glue_figure).
BUILD_ENV = POSENC_PROGRESS=0 POSENC_BOOK_BUILD=1
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: help env book student test test-sites test-runs claims-report unit build-test seeds-test outside-test student-test browser pdf-test lab bench train fix-notebooks clean pdf assignments

help:
	@sed -n '3,15p' Makefile | sed 's/^# \{0,1\}//'

# ---- environment -----------------------------------------------------------------------------

$(INSTALLED): requirements.txt requirements-nodeps.txt pyproject.toml tools/pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info[:2] == (3, 11), f"Python 3.11 is required, found {sys.version.split()[0]}"'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade "pip>=24"
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps -r requirements-nodeps.txt
	$(BIN)/python -m pip install --quiet --no-deps -e .
	$(BIN)/python -m pip install --quiet --no-deps -e tools
	$(BIN)/python -c "import posenc; from d2l import torch as d2l; print('environment ready: posenc', posenc.__version__)"
	touch $@

env: $(INSTALLED)

$(BROWSER):
	@echo "Installing Debian's chromium for the browser check"
	$(if $(filter 0,$(shell id -u)),,sudo) apt-get update -qq
	$(if $(filter 0,$(shell id -u)),,sudo) apt-get install -y -qq --no-install-recommends chromium >/dev/null

# ---- the book ----------------------------------------------------------------------------------

book: $(INSTALLED)
	@start=$$(date +%s); \
	$(BUILD_ENV) $(BIN)/jupyter-book build . $(BUILD_FLAGS); \
	echo "book built in $$(( $$(date +%s) - start )) s"
	$(BIN)/python scripts/execution_report.py _build --budget $(NOTEBOOK_BUDGET_SECONDS)
	$(BIN)/python -m bookkit.claims collect _build $(CLAIMS)

# The student edition: solutions removed from the sources, then built like the book. The build
# executes every student notebook top to bottom and fails if one raises.
student: $(INSTALLED)
	$(BIN)/python -m bookkit.student_edition $(STUDENT_OUTPUT)
	@start=$$(date +%s); \
	$(BUILD_ENV) $(BIN)/jupyter-book build $(STUDENT_OUTPUT)/source --path-output $(STUDENT_OUTPUT) $(BUILD_FLAGS); \
	echo "student edition built in $$(( $$(date +%s) - start )) s: site in $(STUDENT_OUTPUT)/_build/html, notebooks in $(STUDENT_OUTPUT)/notebooks"
	$(BIN)/python scripts/execution_report.py $(STUDENT_OUTPUT)/_build --budget $(NOTEBOOK_BUDGET_SECONDS) \
		--notebooks $(STUDENT_OUTPUT)/source/notebooks

# The PDF editions, printed by Chromium from the built sites (bookkit/pdf.py), then checked
# (tests/test_pdf.py). A site that does not exist yet is built first (make book, make student).
# CI passes the sites make test built: make pdf PDF_SITE=... STUDENT_SITE=...
PDF_OUTPUT := _build/pdf
PDF_SITE ?= _build/html
STUDENT_SITE ?= $(STUDENT_OUTPUT)/_build/html

pdf: $(INSTALLED) $(BROWSER)
	@if [ ! -f $(PDF_SITE)/index.html ]; then $(MAKE) --no-print-directory book; fi
	@if [ ! -f $(STUDENT_SITE)/index.html ]; then $(MAKE) --no-print-directory student; fi
	$(BIN)/python -m bookkit.pdf $(PDF_SITE) $(PDF_OUTPUT)/position-in-attention.pdf --edition full
	$(BIN)/python -m bookkit.pdf $(STUDENT_SITE) $(PDF_OUTPUT)/position-in-attention-student.pdf --edition student
	PDF_DIR=$(PDF_OUTPUT) $(BIN)/python -m pytest tests/test_pdf.py

# nbgrader lives in its own environment (requirements-nbgrader.txt); the notebooks run with the
# book's Python through a kernel spec in the course directory (JUPYTER_PATH). The generated course
# is then graded end to end by tests/test_assignments.py (a solved and a mistaken submission).
NBGRADER_VENV := .venv-nbgrader
NBGRADER_INSTALLED := $(NBGRADER_VENV)/.installed
ASSIGNMENTS_OUTPUT := _build/assignments
COURSE := $(ASSIGNMENTS_OUTPUT)/course

$(NBGRADER_INSTALLED): requirements-nbgrader.txt
	$(PYTHON) -m venv $(NBGRADER_VENV)
	$(NBGRADER_VENV)/bin/python -m pip install --quiet --upgrade "pip>=24"
	$(NBGRADER_VENV)/bin/python -m pip install --quiet -r requirements-nbgrader.txt
	touch $@

assignments: $(INSTALLED) $(NBGRADER_INSTALLED)
	@start=$$(date +%s); \
	$(BIN)/python -m bookkit.assignments $(COURSE) --kernel-python $(BIN)/python; \
	for assignment in $$(cat $(COURSE)/assignments.txt); do \
		(cd $(COURSE) && PATH=$(CURDIR)/$(NBGRADER_VENV)/bin:$$PATH JUPYTER_PATH=$(CURDIR)/$(COURSE)/jupyter \
			nbgrader generate_assignment $$assignment --force --log-level=WARN); \
	done; \
	echo "nbgrader course in $(COURSE): student versions in $(COURSE)/release, in $$(( $$(date +%s) - start )) s"
	COURSE_DIR=$(COURSE) NBGRADER=$(NBGRADER_VENV)/bin/nbgrader $(BIN)/python -m pytest tests/test_assignments.py

# ---- tests -------------------------------------------------------------------------------------

# Two lanes at once, one per core: most of the work is one kernel running small-tensor Python, so
# this about halves the wall time. The site lane builds, checks and prints the sites; the run lane
# runs the unit tests, then the chapters again (shifted seeds, outside the repository, the nbgrader
# course) and needs nothing from it; the steps are split so that the lanes take about as long (their
# times are in the README). The shifted-seed runs go one at a time here, so that no more than two
# notebooks run at once and the build's per-notebook times stay comparable with their budget.
# Each lane stops at its first failure, and make test fails if either does; each step prints its
# wall time. One PyTorch thread per process (OMP_NUM_THREADS=1): two lanes of two-thread kernels on
# two cores slow each other down by a factor of two or more (chapter 9 measured 61 s against 26 s).
test: $(INSTALLED) $(BROWSER)
	@start=$$(date +%s); \
	OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 $(MAKE) --no-print-directory -j2 --output-sync=recurse test-sites test-runs; \
	$(MAKE) --no-print-directory claims-report; \
	echo "make test: all checks passed in $$(( $$(date +%s) - start )) s"

# After both lanes: the test site's build report rewritten with the shifted-seed runs' values and
# margins (an incremental build: nothing is executed again, only the report page is rewritten,
# about 10 s), then the fragile claims over the build and every run.
claims-report: $(INSTALLED)
	$(BUILD_ENV) $(BIN)/jupyter-book build . --path-output $(TEST_OUTPUT) $(BUILD_FLAGS) > $(TEST_OUTPUT)/report-build.log \
		|| { cat $(TEST_OUTPUT)/report-build.log; exit 1; }
	$(BIN)/python -m bookkit.claims report $(TEST_CLAIMS) $(SEED_CLAIMS)

timed = start=$$(date +%s); $(MAKE) --no-print-directory $(1); echo "== make $(1): $$(( $$(date +%s) - start )) s"

# The Chinese site is built right after the English (from its cache), so that the English pages'
# links to it resolve when the browser check follows them.
test-sites: $(INSTALLED) $(BROWSER) $(CJK_FONT)
	@$(call timed,build-test)
	@$(call timed,zh-site-test)
	@$(call timed,browser)
	@$(call timed,browser-zh)
	@$(call timed,student-test)
	@$(call timed,student-zh-test)
	@$(call timed,pdf-test)
	@$(call timed,pdf-zh-test)

test-runs: $(INSTALLED)
	@$(call timed,unit)
	@$(call timed,seeds-test SEED_JOBS=1)
	@$(call timed,outside-test)
	@$(call timed,assignments)
	@$(call timed,i18n-check I18N_DOCS=translated)

unit: $(INSTALLED)
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/python -m pytest tests -m "not browser"

# A clean build: an empty execution cache, so every notebook runs top to bottom in a fresh kernel.
build-test: $(INSTALLED)
	rm -rf $(TEST_OUTPUT)
	@start=$$(date +%s); \
	$(BUILD_ENV) $(BIN)/jupyter-book build . --path-output $(TEST_OUTPUT) $(BUILD_FLAGS); \
	echo "clean build took $$(( $$(date +%s) - start )) s"
	$(BIN)/python scripts/execution_report.py $(TEST_OUTPUT)/_build --budget $(NOTEBOOK_BUDGET_SECONDS)
	$(BIN)/python -m bookkit.claims collect $(TEST_OUTPUT)/_build $(TEST_CLAIMS)
	SITE_DIR=$(TEST_OUTPUT)/_build/html $(BIN)/python -m pytest tests/test_reference_pages.py

# Every chapter again with every seed shifted (posenc.seed_everything adds POSENC_SEED_OFFSET):
# a claim of the text must hold for any seed, not only the one the text was written with. Every
# run's claims go to $(SEED_CLAIMS), for the build report and the fragile claims.
SEED_OFFSETS ?= 1 2
# Two runs at once (one per core): the chapters are mostly small-tensor Python, so this about halves
# the time.
SEED_JOBS ?= 2
seeds-test: $(INSTALLED)
	$(BIN)/python -m bookkit.seed_shift --offsets $(SEED_OFFSETS) --jobs $(SEED_JOBS) --claims-out $(SEED_CLAIMS)

# Chapters as a reader outside the repository runs them (bookkit/outside.py): a fresh venv with
# only Jupyter, each notebook copied out, its bootstrap cell installing posenc[book] from a local
# clone of the committed branch. make test runs the chapters that need more than posenc: d2l
# (chapter 3), the packaged MiniLM weights (chapter 2) and the stored models (chapter 9, in its
# Chinese edition: the same code cells, checked by tests/test_i18n_notebooks.py); the imports of
# every chapter are checked against the extra by tests/test_packaging.py.
OUTSIDE_CHAPTERS ?= notebooks/02_one_hot_and_learned.ipynb notebooks/03_sinusoidal.ipynb \
	$(ZH_NOTEBOOKS)/notebooks/09_stretching_rope.ipynb
outside-test: $(INSTALLED) zh-notebooks
	$(BIN)/python -m bookkit.outside $(OUTSIDE_CHAPTERS)

# The Chinese notebooks (bookkit/i18n_notebooks.py), for Colab and Jupyter: every chapter with its
# Markdown from the catalogs and its code cells unchanged, in $(ZH_NOTEBOOKS)/notebooks, and the
# Chinese student handouts (solutions removed) in $(ZH_NOTEBOOKS)/student/notebooks. Fails if a
# message has no current translation. About 2 s.
ZH_NOTEBOOKS := _build/zh
.PHONY: zh-notebooks
zh-notebooks: $(INSTALLED)
	$(BIN)/python -m bookkit.i18n_notebooks $(ZH_NOTEBOOKS) --strict

# The English site; tests/browser/test_chinese_site.py checks the Chinese one (browser-zh).
browser: $(INSTALLED) $(BROWSER)
	SITE_DIR=$(TEST_OUTPUT)/_build/html SCREENSHOT_DIR=$(TEST_OUTPUT)/screenshots \
		$(BIN)/python -m pytest tests/browser -m browser --ignore=tests/browser/test_chinese_site.py

# The student edition from scratch, then the check that its pages hold no solution text.
student-test: $(INSTALLED)
	rm -rf $(STUDENT_OUTPUT)
	$(MAKE) --no-print-directory student
	STUDENT_DIR=$(STUDENT_OUTPUT) $(BIN)/python -m pytest tests/test_exercise_catalog.py

# The PDF editions printed from the two sites make test built and checked, then checked themselves.
pdf-test: $(INSTALLED) $(BROWSER)
	$(MAKE) --no-print-directory pdf PDF_SITE=$(TEST_OUTPUT)/_build/html STUDENT_SITE=$(STUDENT_OUTPUT)/_build/html

# ---- working on the book -----------------------------------------------------------------------

lab: $(INSTALLED)
	$(BIN)/python -m pip install --quiet -r requirements-lab.txt
	$(BIN)/jupyter lab notebooks $(if $(filter 0,$(shell id -u)),--allow-root)

bench: $(INSTALLED)
	$(BIN)/python benchmarks/rope_speed.py
	@echo
	$(BIN)/python benchmarks/attention_speed.py
	@echo
	$(BIN)/python benchmarks/train_time.py --jobs $(TRAIN_JOBS)
	@echo
	@if [ -d $(TEST_OUTPUT)/_build/.jupyter_cache ]; then \
		echo "chapters of the last clean build (make build-test) against their budget:"; \
		$(BIN)/python scripts/execution_report.py $(TEST_OUTPUT)/_build --budget $(NOTEBOOK_BUDGET_SECONDS) --strict; \
	else echo "no clean build to time: run make build-test first"; fi

# The model store (posenc.store): every trained model the book shows, in src/posenc/trained (package
# data). Resumable: a model whose manifest matches the training code and config is skipped.
# ONLY is a shell pattern on family names (make train ONLY='ch8-recall-*'); one process per core.
ONLY ?= *
TRAIN_JOBS ?= 2
# First renew what a code change left stale but retraining reproduces bit for bit (posenc.store.restamp).
train: $(INSTALLED)
	nice -n 10 $(BIN)/python -m posenc.store restamp --only '$(ONLY)'
	nice -n 10 $(BIN)/python -m posenc.store train --only '$(ONLY)' --jobs $(TRAIN_JOBS)

fix-notebooks: $(INSTALLED)
	$(BIN)/python -m bookkit.notebook_hygiene --fix

clean:
	rm -rf _build

# ---- the Chinese edition (issue 33) ------------------------------------------------------------
# Message catalogs, one per document, in locale/zh_CN/LC_MESSAGES (bookkit/i18n.py). Extraction is
# Sphinx's gettext builder run through Jupyter Book with execution off (nothing runs), into its own
# output folder, so the English build and its execution cache are untouched. The API reference
# stays English and gets no catalog. The extension bookkit/i18n_sphinx.py, loaded by the extraction
# and the Chinese site only, adds what Sphinx alone misses: table cells, exercise titles, and the
# captions and alt texts of the figures that code cells make.
# Another output or catalog folder, e.g. to try a change on a copy:
#   make i18n I18N_BUILD=_build/i18n-try I18N_LOCALE=/tmp/locale-copy
I18N_BUILD ?= _build/i18n
I18N_POT = $(I18N_BUILD)/_build/gettext
I18N_LOCALE ?= locale
I18N_LANGUAGE := zh_CN
# make i18n-check I18N_DOCS="book/intro book/notation" checks only those documents;
# make i18n-check I18N_DOCS=translated the documents of bookkit.i18n.TRANSLATED.
I18N_DOCS ?=

.PHONY: i18n-pot i18n i18n-check

i18n-pot: $(INSTALLED)
	rm -rf $(I18N_BUILD)
	$(BIN)/python -m bookkit.i18n config $(I18N_BUILD)/_config.yml
	@start=$$(date +%s); \
	$(BIN)/jupyter-book build . --config $(I18N_BUILD)/_config.yml --path-output $(I18N_BUILD) \
		--builder custom --custom-builder gettext -q > $(I18N_BUILD)/gettext.log 2>&1 \
		|| { cat $(I18N_BUILD)/gettext.log; exit 1; }; \
	rm -f $(I18N_POT)/book/api.pot; \
	echo "messages extracted in $$(( $$(date +%s) - start )) s into $(I18N_POT) (log: $(I18N_BUILD)/gettext.log)"

# The catalogs updated from the current English: new messages added untranslated, changed ones
# marked fuzzy with their old translation as a suggestion, removed ones kept as obsolete (#~);
# then Babel's spurious python-format flags dropped ("25 % of" is not a format string), and the
# obsolete entry of a message that came back, which sphinx-intl leaves beside the new one (msgfmt -c
# rejects the duplicate), dropped, its translation given back to the message (bookkit.i18n unflag).
i18n: i18n-pot
	$(BIN)/sphinx-intl update -p $(I18N_POT) -d $(I18N_LOCALE) -l $(I18N_LANGUAGE) -w 0
	$(BIN)/python -m bookkit.i18n unflag $(I18N_LOCALE)

# Fails, naming the document and the English message, when a message of the current English has
# no current (non-empty, non-fuzzy) translation, or a translation changes a role target, a formula
# or inline code, or strays from the glossary's Chinese form of a term.
i18n-check: i18n-pot
	$(BIN)/python -m bookkit.i18n check --pot $(I18N_POT) --locale $(I18N_LOCALE) \
		$(if $(filter translated,$(I18N_DOCS)),--translated,$(if $(strip $(I18N_DOCS)),--only $(I18N_DOCS)))

# The Chinese site from the English build's executed notebooks: every notebook must already be in
# ZH_CACHE (make book's cache by default; make test's is _build/test/_build/.jupyter_cache), or
# the target stops before building, so nothing is executed a second time. Site in
# $(ZH_OUTPUT)/_build/html, with Chinese search (jieba cuts the text into words, the glossary's
# terms kept whole) and, like the English, warnings as errors.
# The published layout (bookkit/language_links.py): the English site at the root, the Chinese in
# its zh/ folder, every page linking to the same page in the other language. So the Chinese site
# is then copied into EN_SITE/zh when EN_SITE holds a built English site (make book's by default).
ZH_OUTPUT ?= _build/zh
ZH_CACHE ?= _build/.jupyter_cache
ZH_SITE = $(ZH_OUTPUT)/_build/html
EN_SITE ?= _build/html

.PHONY: book-zh zh-site-test browser-zh pdf-zh pdf-zh-test
book-zh: $(INSTALLED)
	$(BIN)/python -m bookkit.i18n zh-config $(ZH_OUTPUT)/_config.yml --cache $(ZH_CACHE) --locale $(I18N_LOCALE)
	@start=$$(date +%s); \
	$(BUILD_ENV) $(BIN)/jupyter-book build . --config $(ZH_OUTPUT)/_config.yml --path-output $(ZH_OUTPUT) $(BUILD_FLAGS) && \
	echo "Chinese site built in $$(( $$(date +%s) - start )) s: $(ZH_SITE)"
	@if [ -f $(EN_SITE)/index.html ]; then \
		rm -rf $(EN_SITE)/zh && cp -r $(ZH_SITE) $(EN_SITE)/zh && echo "and copied to $(EN_SITE)/zh"; \
	else echo "no English site in $(EN_SITE): the language links of $(ZH_SITE) lead nowhere until it is built"; fi

# Debian's Noto CJK fonts, with which Chromium renders the Chinese site and prints its PDF (without
# them, Debian's Chromium has no Chinese glyphs at all).
CJK_FONT := /usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc
$(CJK_FONT):
	@echo "Installing Debian's fonts-noto-cjk for the Chinese site"
	$(if $(filter 0,$(shell id -u)),,sudo) apt-get update -qq
	$(if $(filter 0,$(shell id -u)),,sudo) apt-get install -y -qq --no-install-recommends fonts-noto-cjk >/dev/null

# make test: the Chinese site built from the clean build's cache, into the test site's zh/ folder
# (what is published), then checked in the browser like the English (every page at desktop and
# phone widths, formulas, figures, links; interactive figures drawn and solutions folded, without
# moving the sliders or opening the solutions again: same scripts, same data) and for what is
# Chinese (CJK text in a Noto CJK face, Chinese pages, search that finds words), and printed (the
# full edition only).
ZH_TEST_SITE := $(TEST_OUTPUT)/_build/html/zh
zh-site-test: $(INSTALLED)
	$(MAKE) --no-print-directory book-zh ZH_OUTPUT=$(TEST_OUTPUT)/zh ZH_CACHE=$(TEST_OUTPUT)/_build/.jupyter_cache \
		EN_SITE=$(TEST_OUTPUT)/_build/html

# Screenshots of the Chinese pages only on request (a full-page screenshot of every page at two
# widths costs time, and the English ones show the layout): make browser-zh ZH_SCREENSHOTS=<folder>.
ZH_SCREENSHOTS ?=
browser-zh: $(INSTALLED) $(BROWSER) $(CJK_FONT)
	SITE_DIR=$(ZH_TEST_SITE) SITE_ROOT=$(TEST_OUTPUT)/_build/html $(if $(ZH_SCREENSHOTS),SCREENSHOT_DIR=$(ZH_SCREENSHOTS)) \
		BROWSER_INTERACT=0 $(BIN)/python -m pytest tests/browser/test_site.py tests/browser/test_chinese_site.py -m browser

# The Chinese PDF (complete edition), printed from ZH_PDF_SITE like the English, then checked: its
# pages, their Chinese text, the Noto CJK fonts it embeds, and its title page, contents and part
# titles in Chinese (tests/test_pdf.py -k chinese). The title page and the contents are the Chinese
# site's: its title and author from the configuration it was built with (ZH_PDF_CONFIG, written by
# make book-zh), its part titles from the root document's catalog, as its sidebar shows them.
ZH_PDF_SITE ?= $(ZH_SITE)
ZH_PDF_CONFIG ?= $(ZH_OUTPUT)/_config.yml
ZH_PDF := position-in-attention-zh.pdf
pdf-zh: $(INSTALLED) $(BROWSER) $(CJK_FONT)
	$(BIN)/python -m bookkit.pdf $(ZH_PDF_SITE) $(PDF_OUTPUT)/$(ZH_PDF) --edition full --config $(ZH_PDF_CONFIG)
	PDF_DIR=$(PDF_OUTPUT) PDF_CHINESE=$(ZH_PDF) $(BIN)/python -m pytest tests/test_pdf.py -k chinese

pdf-zh-test: $(INSTALLED)
	$(MAKE) --no-print-directory pdf-zh ZH_PDF_SITE=$(ZH_TEST_SITE) ZH_PDF_CONFIG=$(TEST_OUTPUT)/zh/_config.yml

# The Chinese student edition: the student edition's sources (make student) built in Chinese from
# that build's execution cache, as the Chinese site is from the English (a notebook missing from
# the cache stops the target before the build, so nothing is executed a second time), warnings as
# errors, into $(STUDENT_ZH_OUTPUT)/_build/html; then copied into the English student site's zh/
# folder, where the two sites' language links expect each other (bookkit/language_links.py), as
# the full sites do.
STUDENT_ZH_OUTPUT := $(STUDENT_OUTPUT)/zh
STUDENT_ZH_SITE := $(STUDENT_OUTPUT)/_build/html/zh
.PHONY: student-zh student-zh-test
student-zh: $(INSTALLED)
	@if [ ! -f $(STUDENT_OUTPUT)/_build/html/index.html ]; then $(MAKE) --no-print-directory student; fi
	$(BIN)/python -m bookkit.i18n zh-config $(STUDENT_ZH_OUTPUT)/_config.yml --edition student \
		--source $(STUDENT_OUTPUT)/source --cache $(STUDENT_OUTPUT)/_build/.jupyter_cache --locale $(I18N_LOCALE)
	@start=$$(date +%s); \
	$(BUILD_ENV) $(BIN)/jupyter-book build $(STUDENT_OUTPUT)/source --config $(STUDENT_ZH_OUTPUT)/_config.yml \
		--path-output $(STUDENT_ZH_OUTPUT) $(BUILD_FLAGS) && \
	echo "Chinese student edition built in $$(( $$(date +%s) - start )) s: $(STUDENT_ZH_OUTPUT)/_build/html"
	rm -rf $(STUDENT_ZH_SITE) && cp -r $(STUDENT_ZH_OUTPUT)/_build/html $(STUDENT_ZH_SITE)

# make test, after student-test: the Chinese student edition from student-test's cache, checked
# like the English one (every exercise there, no solution text, in English or in Chinese) and for
# being Chinese (tests/test_exercise_catalog.py -k chinese).
student-zh-test: $(INSTALLED)
	$(MAKE) --no-print-directory student-zh
	STUDENT_DIR=$(STUDENT_OUTPUT) STUDENT_ZH_SITE=$(STUDENT_ZH_SITE) $(BIN)/python -m pytest tests/test_exercise_catalog.py -k chinese
