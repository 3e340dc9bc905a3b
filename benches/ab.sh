#!/usr/bin/env bash
# Times two builds of one criterion bench in the same window, alternating them, because this
# project's shared machines drift by more than most changes are worth.
#
#   benches/ab.sh OLD_BINARY NEW_BINARY ROUNDS 'criterion filter'
#
# The binaries are copies of target/release/deps/<bench>-<hash> taken before and after a change
# (`cargo bench -p benches --bench <bench> --no-run` prints the path). Each round runs OLD then
# NEW with --warm-up-time 1 --measurement-time 2 and prints one line per benchmark:
# "<binary> <id> <median ns>". Sort by id to compare: sort -k2,2 -k1,1
set -euo pipefail
old=$1 new=$2 rounds=$3 filter=$4
for _ in $(seq "$rounds"); do
  for bin in "$old" "$new"; do
    "$bin" --bench --warm-up-time 1 --measurement-time 2 --noplot --output-format bencher "$filter" 2>/dev/null |
      awk -v b="$(basename "$bin")" '/bench:/ { gsub(",", "", $5); print b, $2, $5 }'
  done
done
