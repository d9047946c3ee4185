#!/usr/bin/env bash
# Keeps the small text/JSON files of a lab run (the tree lab.sh wrote, e.g. unpacked from the
# device's lab.tgz) as a results directory, and writes its table next to it:
#   tests/live/keep.sh /tmp/x/labout tests/live/results/NAME
# The raw doctor.json/search.json (their *.min.json stay), stderr files and empty files are left out.
set -eu
SRC=${1:?lab output directory}
DEST=${2:?results directory}
HERE=$(cd "$(dirname "$0")" && pwd)
rm -rf "$DEST"
mkdir -p "$DEST"
tar cf - -C "$SRC" --exclude doctor.json --exclude search.json --exclude search-text-only.json \
    --exclude '*.err' --exclude table.md --exclude lab.log --exclude lab.tgz . | tar xf - -C "$DEST"
find "$DEST" -type f -size 0 -delete
echo "$(du -sb "$DEST" | cut -f1) bytes in $DEST"
python3 "$HERE/compare.py" "$DEST" > "$DEST.md" || true
echo "table: $DEST.md"
