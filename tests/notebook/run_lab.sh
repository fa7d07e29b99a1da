#!/usr/bin/env bash
# run_lab.sh — the JupyterLab scenario (tests/notebook/jupyterlab.mjs) in a
# fresh virtual environment holding the wheel and JupyterLab from PyPI.
#
#   tests/notebook/run_lab.sh build/wheel/bertlens-<version>-py3-none-any.whl [VENV]
#
# VENV: a virtual environment that already holds the wheel and JupyterLab
# (make test-notebook passes run.sh's); without it, a fresh one is made.
set -euo pipefail
cd "$(dirname "$0")/../.."
WHEEL=${1:?usage: tests/notebook/run_lab.sh WHEEL [VENV]}
VENV=${2:-}
PYTHON=${PYTHON:-python3}
if [ -z "$VENV" ]; then
  VENV=build/jlab/venv
  rm -rf build/jlab
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check "$WHEEL" jupyterlab
fi
node tests/notebook/jupyterlab.mjs "$VENV"
