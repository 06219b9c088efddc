#!/usr/bin/env bash
# Sets up everything the test suite needs on a fresh Debian machine, then runs it:
# lint (ruff), types (mypy) and the tests (pytest). Usage: bash tests/run.sh [pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v chromium >/dev/null 2>&1; then
    echo "== installing Debian's chromium (for the site's browser tests)"
    if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi
command -v git >/dev/null || { echo "git is required" >&2; exit 2; }
if ! command -v npm >/dev/null 2>&1; then
    echo "== installing Debian's npm (to fetch GitHub's GraphQL schema)"
    if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq npm >/dev/null
fi

echo "== installing prkb with its test dependencies"
python3 -m pip install -q --disable-pip-version-check -e '.[test]'

echo "== GitHub's GraphQL schema (tests/graphql_schema.sh)"
PRKB_GRAPHQL_SCHEMA="$(bash tests/graphql_schema.sh)"
export PRKB_GRAPHQL_SCHEMA

echo "== ruff"
python3 -m ruff check prkb tests bench
echo "== mypy"
python3 -m mypy prkb
echo "== pytest"
python3 -m pytest -n 2 -q "$@"
