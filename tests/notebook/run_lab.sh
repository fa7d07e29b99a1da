#!/usr/bin/env bash
# run_lab.sh — the JupyterLab scenario (tests/notebook/jupyterlab.mjs) in a
# fresh virtual environment holding the wheel and JupyterLab from PyPI.
#
#   tests/notebook/run_lab.sh build/wheel/bertlens-<version>-py3-none-any.whl
#   NOTEBOOK_VENV=DIR tests/notebook/run_lab.sh WHEEL   in that venv, made beforehand
#                                                        by venv.sh (as make test-notebook does)
set -euo pipefail
cd "$(dirname "$0")/../.."
WHEEL=${1:?usage: tests/notebook/run_lab.sh WHEEL}
VENV=${NOTEBOOK_VENV:-build/jlab/venv}
[ -n "${NOTEBOOK_VENV:-}" ] || tests/notebook/venv.sh make "$VENV" "$WHEEL" jupyterlab
node tests/notebook/jupyterlab.mjs "$VENV"
