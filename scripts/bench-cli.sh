#!/usr/bin/env bash
# `make bench-cli`: `safetensors-nano edit --convert F32:BF16` on a large
# sparse F32 file, side by side with `cp` of the same file, in one run.
#
# - Peak RSS of the edit (VmHWM, from /usr/bin/time -v): the goal is < 128 MB
#   whatever the file size (only the header and fixed buffers are held).
# - Throughput: input bytes per second of the edit and of
#   `cp --sparse=never IN OUT && sync OUT` (cp made to write every byte, and
#   made as durable as the edit, which syncs before its rename), in ROUNDS
#   interleaved rounds: the fastest of each, and the ratio of the medians
#   (goal ≥ 0.5× cp).
#
# SIZE (default 20G: bytes of F32 data; K/M/G suffixes), ROUNDS (default 3),
# DIR (default target/bench-cli; needs about SIZE free while cp runs), BIN
# (default the release build; another binary to compare, e.g. an older one).
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE=${SIZE:-20G}
ROUNDS=${ROUNDS:-3}
DIR=${DIR:-target/bench-cli}
BIN=${BIN:-target/release/safetensors-nano}

cargo build --release -q -p safetensors-nano-cli
mkdir -p "$DIR"
IN="$DIR/in.safetensors" OUT="$DIR/out.safetensors" CP="$DIR/cp.safetensors"
trap 'rm -f "$IN" "$OUT" "$CP"' EXIT

bytes=$(numfmt --from=iec "$SIZE")
elements=$((bytes / 4))
# The sparse writer: the header, then the file's length set (no data blocks).
python3 - "$IN" "$elements" <<'PY'
import sys
path, n = sys.argv[1], int(sys.argv[2])
h = '{"w":{"dtype":"F32","shape":[%d],"data_offsets":[0,%d]}}' % (n, 4 * n)
h += " " * (-len(h) % 8)
with open(path, "wb") as f:
    f.write(len(h).to_bytes(8, "little") + h.encode())
    f.truncate(8 + len(h) + 4 * n)
PY
file_len=$(stat -c %s "$IN")
echo "input: $IN, $(numfmt --to=iec "$file_len") sparse F32 ($elements elements); $ROUNDS rounds"

# The first read of the file's holes fills the page cache, which would then
# serve whichever command runs second: read it once first, so both start alike.
cat "$IN" > /dev/null

now() { date +%s.%N; }
calc() { awk "BEGIN { print $1 }"; }
edit_times=() cp_times=() rss_kb=0
for round in $(seq "$ROUNDS"); do
  t0=$(now)
  /usr/bin/time -v -o "$DIR/time.txt" "$BIN" edit --quiet --convert F32:BF16 "$IN" "$OUT"
  t1=$(now)
  rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$DIR/time.txt")
  (( rss > rss_kb )) && rss_kb=$rss
  rm -f "$OUT"
  t2=$(now)
  cp --sparse=never "$IN" "$CP" && sync "$CP"
  t3=$(now)
  rm -f "$CP"
  e=$(calc "$t1 - $t0") c=$(calc "$t3 - $t2")
  edit_times+=("$e") cp_times+=("$c")
  printf 'round %d: edit %.2f s, cp %.2f s\n' "$round" "$e" "$c"
done

stats() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {m = (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2; print a[1], m}'; }
read -r edit_min edit_med < <(stats "${edit_times[@]}")
read -r cp_min cp_med < <(stats "${cp_times[@]}")
rate() { calc "$file_len / $1 / 1000000"; }
printf 'edit --convert F32:BF16: fastest %.2f s (%.0f MB/s), median %.2f s\n' "$edit_min" "$(rate "$edit_min")" "$edit_med"
printf 'cp --sparse=never + sync: fastest %.2f s (%.0f MB/s), median %.2f s\n' "$cp_min" "$(rate "$cp_min")" "$cp_med"
ratio=$(calc "$cp_med / $edit_med")
printf 'throughput ratio edit/cp (medians): %.2fx (goal >= 0.5x)\n' "$ratio"
printf 'edit peak RSS (VmHWM): %.1f MB (goal < 128 MB)\n' "$(calc "$rss_kb / 1024")"
