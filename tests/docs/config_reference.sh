#!/usr/bin/env bash
# Checks that docs/config-reference.md is what tools/docs/config_reference.py makes of this build's option table
# (`fusetrain train --help-config`): a key added, removed or re-described without regenerating the page fails here.
set -euo pipefail
: "${FUSETRAIN_BIN:?folder holding fusetrain}" "${FUSETRAIN_SOURCE:?the source tree}" "${FUSETRAIN_TMP:?scratch folder}"
python=${FUSETRAIN_PYTHON:-python3}
command -v "$python" > /dev/null || python=python3
page=$FUSETRAIN_SOURCE/docs/config-reference.md
generator=$FUSETRAIN_SOURCE/tools/docs/config_reference.py
rm -rf "$FUSETRAIN_TMP" && mkdir -p "$FUSETRAIN_TMP"
fresh=$FUSETRAIN_TMP/config-reference.md

"$FUSETRAIN_BIN/fusetrain" train --help-config > "$FUSETRAIN_TMP/help-config.txt"
"$python" "$generator" --out "$fresh" < "$FUSETRAIN_TMP/help-config.txt"
[ -f "$page" ] || { echo "FAIL: $page is missing"; exit 1; }

if cmp -s "$fresh" "$page"; then
  echo "PASS: docs/config-reference.md matches the option table ($(grep -c '^| `' "$fresh") keys)"
  exit 0
fi

# Name the keys first (the usual slip), then show every difference.
# shellcheck disable=SC2016  # the backticks are markdown, not a command substitution
keys_of() { sed -n 's/^| `\([a-z_][a-z0-9_.]*\)` |.*/\1/p' "$1" | sort; }
missing=$(comm -23 <(keys_of "$fresh") <(keys_of "$page"))
extra=$(comm -13 <(keys_of "$fresh") <(keys_of "$page"))
echo "FAIL: docs/config-reference.md differs from what the option table generates now."
[ -z "$missing" ] || echo "  keys in the option table but not on the page: $(echo "$missing" | tr '\n' ' ')"
[ -z "$extra" ] || echo "  keys on the page but not in the option table: $(echo "$extra" | tr '\n' ' ')"
echo "  diff (--- the checked-in page, +++ generated from $FUSETRAIN_BIN/fusetrain):"
diff -u --label docs/config-reference.md --label generated "$page" "$fresh" | sed 's/^/    /' || true
echo "  Regenerate it with the fusetrain of this build:"
echo "    cd $FUSETRAIN_SOURCE && $FUSETRAIN_BIN/fusetrain train --help-config | tools/docs/config_reference.py --out docs/config-reference.md"
exit 1
