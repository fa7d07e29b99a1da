#!/usr/bin/env bash
# run.sh — the notebook test: a fresh virtual environment with only the wheel,
# its dependencies (numpy) and nbclient/ipykernel/nbconvert from PyPI; a
# notebook drawing with bertlens executed there (run_notebook.py); its
# nbconvert HTML export opened offline in headless Chromium (check_export.mjs).
#
#   tests/notebook/run.sh build/wheel/bertlens-<version>-py3-none-any.whl
#
# Needs python3 with venv, network access to PyPI, node with playwright-core
# and /usr/bin/chromium (as the browser tests do). Work files: build/notebook/.
set -euo pipefail
cd "$(dirname "$0")/../.."
WHEEL=${1:?usage: tests/notebook/run.sh WHEEL}
OUT=build/notebook
PYTHON=${PYTHON:-python3}
rm -rf "$OUT"
"$PYTHON" -m venv "$OUT/venv"
"$OUT/venv/bin/pip" install -q --disable-pip-version-check "$WHEEL" nbclient ipykernel nbconvert
"$OUT/venv/bin/python" tests/notebook/run_notebook.py "$OUT"
node tests/notebook/check_export.mjs "$OUT/bertlens.html" "$OUT/expected.json"
