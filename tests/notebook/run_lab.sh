#!/usr/bin/env bash
# run_lab.sh — the JupyterLab scenario (tests/notebook/jupyterlab.mjs) in a
# fresh virtual environment holding the wheel and JupyterLab from PyPI.
#
#   tests/notebook/run_lab.sh build/wheel/bertlens-<version>-py3-none-any.whl
set -euo pipefail
cd "$(dirname "$0")/../.."
WHEEL=${1:?usage: tests/notebook/run_lab.sh WHEEL}
VENV=build/jlab/venv
PYTHON=${PYTHON:-python3}
rm -rf build/jlab
"$PYTHON" -m venv "$VENV"
"$VENV/bin/pip" install -q --disable-pip-version-check "$WHEEL" jupyterlab
node tests/notebook/jupyterlab.mjs "$VENV"
