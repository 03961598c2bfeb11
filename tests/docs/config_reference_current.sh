#!/usr/bin/env bash
# docs/configuration.md must carry exactly what `attributiond --config-reference` prints
# from the code's key tables, so the documentation cannot drift from the code.
set -euo pipefail
attributiond=$1 doc=$2
expected=$("$attributiond" --config-reference)
actual=$(sed -n '/<!-- BEGIN GENERATED: attributiond --config-reference -->/,/<!-- END GENERATED -->/p' "$doc" | sed '1d;$d')
if [ "$expected" != "$actual" ]; then
  diff <(echo "$expected") <(echo "$actual") || true
  echo "docs/configuration.md is out of date: regenerate the block with attributiond --config-reference" >&2
  exit 1
fi
echo "configuration reference is current"
