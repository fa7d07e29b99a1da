#!/usr/bin/env bash
# venv.sh — a fresh virtual environment for the notebook tests (run.sh,
# run_lab.sh): packages from PyPI, then the wheel with its dependencies.
#
#   tests/notebook/venv.sh start VENV PACKAGE...   remove VENV, then make it and pip install the
#                                                  packages in the background (log: VENV.log)
#   tests/notebook/venv.sh finish VENV WHEEL       wait for that, then pip install the wheel
#   tests/notebook/venv.sh make VENV WHEEL PACKAGE...   both, in the foreground
#
# `make test` starts the venv (nbclient, ipykernel, nbconvert and jupyterlab:
# what both runs need, one install) before its builds: pip spends minutes
# waiting on PyPI and the disk, hidden behind the builds and tests that keep
# the CPUs busy meanwhile. numpy comes with the wheel (its declared
# dependency: none of the packages above needs it), so a wheel that forgot
# it still fails. --no-compile: pip would byte-compile every module of every
# package (JupyterLab brings ~100), when the tests import a few.
set -euo pipefail
usage() { echo "usage: tests/notebook/venv.sh start VENV PACKAGE... | finish VENV WHEEL | make VENV WHEEL PACKAGE..." >&2; exit 2; }
PYTHON=${PYTHON:-python3}
PIP=(pip install -q --disable-pip-version-check --no-compile)
mode=${1:-}; VENV=${2:-}
[ -n "$VENV" ] || usage

start() {
  rm -rf "$VENV" "$VENV.status" "$VENV.log" "$VENV.pid"
  mkdir -p "$(dirname "$VENV")"
  ( s=0; { "$PYTHON" -m venv "$VENV" && "$VENV/bin/${PIP[0]}" "${PIP[@]:1}" "$@"; } || s=$?
    echo "$s" > "$VENV.status.tmp" && mv "$VENV.status.tmp" "$VENV.status" ) > "$VENV.log" 2>&1 < /dev/null &
  echo $! > "$VENV.pid"
}

finish() {
  local wheel=$1 waited=0
  [ -e "$VENV.pid" ] || { echo "venv.sh: $VENV was not started (venv.sh start)" >&2; exit 1; }
  until [ -e "$VENV.status" ]; do
    if ! kill -0 "$(cat "$VENV.pid")" 2>/dev/null && [ ! -e "$VENV.status" ]; then
      cat "$VENV.log" >&2; echo "venv.sh: the pip install of $VENV stopped without a status" >&2; exit 1
    fi
    sleep 1; waited=$((waited + 1))
    [ $waited -lt 1800 ] || { cat "$VENV.log" >&2; echo "venv.sh: no end of the pip install of $VENV after 30 minutes" >&2; exit 1; }
  done
  [ $waited = 0 ] || echo "venv.sh: waited ${waited} s for $VENV"
  if [ "$(cat "$VENV.status")" != 0 ]; then
    cat "$VENV.log" >&2; echo "venv.sh: making $VENV failed (above)" >&2; exit 1
  fi
  "$VENV/bin/${PIP[0]}" "${PIP[@]:1}" "$wheel"
}

case $mode in
  start) shift 2; [ $# -gt 0 ] || usage; start "$@" ;;
  finish) [ -n "${3:-}" ] || usage; finish "$3" ;;
  make) [ -n "${3:-}" ] || usage; wheel=$3; shift 3; start "$@"; finish "$wheel" ;;
  *) usage ;;
esac
