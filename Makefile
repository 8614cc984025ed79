# The two commands of the course (see README.md). Both create .venv and install first.
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
SMOKE  := FROMSCRATCH_PROFILE=smoke

.PHONY: book test install clean

book: $(STAMP)
	$(VENV)/bin/jupyter-book build . --builder html
	@echo "The book is at file://$(CURDIR)/_build/html/index.html"

test: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(SMOKE) $(PY) -m pytest -p no:cacheprovider tests
	$(SMOKE) $(PY) -m pytest --nbval-lax -p no:cacheprovider notebooks
	$(SMOKE) $(VENV)/bin/jupyter-book build . --builder html --path-output _build/smoke -W --keep-going
	FROMSCRATCH_BOOK_HTML=$(CURDIR)/_build/smoke/_build/html $(PY) -m pytest tests/book -p no:cacheprovider

install: $(STAMP)

# torch first, as the CPU wheel 2.13.0, unless a torch is already there (e.g. Colab's); a bare
# `torch` requirement on a fresh machine would pull a multi-GB CUDA build.
$(STAMP): requirements.txt pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -c "import torch" 2>/dev/null || $(PY) -m pip install torch==2.13.0
	$(PY) -m pip install -r requirements.txt -e .
	touch $(STAMP)

clean:
	rm -rf _build .pytest_cache
