#!/usr/bin/env bash
# run.sh — the notebook test: a fresh virtual environment with only the wheel,
# its dependencies (numpy) and nbclient/ipykernel/nbconvert from PyPI; a
# notebook drawing with bertlens executed there (run_notebook.py); its
# nbconvert HTML export opened offline in headless Chromium (check_export.mjs).
#
#   tests/notebook/run.sh build/wheel/bertlens-<version>-py3-none-any.whl
#   NOTEBOOK_VENV=DIR tests/notebook/run.sh WHEEL   in that venv, made beforehand
#                                                    by venv.sh (as make test-notebook does)
#
# Needs python3 with venv, network access to PyPI, node with playwright-core
# and /usr/bin/chromium (as the browser tests do). Work files: build/notebook/.
set -euo pipefail
cd "$(dirname "$0")/../.."
WHEEL=${1:?usage: tests/notebook/run.sh WHEEL}
OUT=build/notebook
rm -rf "$OUT"
VENV=${NOTEBOOK_VENV:-$OUT/venv}
[ -n "${NOTEBOOK_VENV:-}" ] || tests/notebook/venv.sh make "$VENV" "$WHEEL" nbclient ipykernel nbconvert
mkdir -p "$OUT"
"$VENV/bin/python" tests/notebook/run_notebook.py "$OUT"
node tests/notebook/check_export.mjs "$OUT/bertlens.html" "$OUT/expected.json"
