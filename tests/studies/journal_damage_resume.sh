#!/bin/sh
# A stopped study whose journals were damaged resumes to the uninterrupted result: half of the
# study is computed (run --part 0/2, which stops with its journal in <output>.parts/), a byte of
# one of its records is flipped, and two journals cut short in their header (0 and 5 bytes: a
# full disk while they were created) are added with a higher attempt number. `inspect` reads
# the folder; `run --resume` warns about the damaged record (its sample recomputed) and sets
# the cut-short journals aside (renamed *.damaged) with a warning naming each, and its result
# is the uninterrupted run's, bit for bit, with no journal folder left. A journal with a whole
# header of garbage is still refused, and left where it is.
# usage: journal_damage_resume.sh MBSTUDY SPEC WORKDIR COMPARE_PY
set -u
mbstudy=$1
spec=$2
dir=$3
compare=$4
rm -rf "$dir"
mkdir -p "$dir"

fail() {
  echo "FAIL: $*"
  exit 1
}

"$mbstudy" run "$spec" --output "$dir/full.h5" --quiet || fail "the uninterrupted run failed"

out="$dir/resumed.h5"
parts="$out.parts"
"$mbstudy" run "$spec" --output "$out" --part 0/2 --quiet || fail "the first half failed"
[ -f "$out" ] && fail "the first half wrote the result"
journal=$(ls "$parts"/j0-p0-r0-t*.bin | head -1)
[ -f "$journal" ] || fail "no journal in $parts"
# flip a byte inside the 5th record (a record starts with its magic)
/usr/bin/python3 - "$journal" <<'EOF' || fail "cannot damage $journal"
import sys
path = sys.argv[1]
b = bytearray(open(path, "rb").read())
magic = b"\xe5MBSrec\x1f" if b[:8] == b"MBSJRNL3" else b"MBSR"
at, k = 0, 0
while k < 5:
    at = b.index(magic, at + 1)
    k += 1
b[at + 60] ^= 0x04
open(path, "wb").write(b)
print(f"flipped byte {at + 60} of {path} (in its 5th record)")
EOF
: > "$parts/j1-r0-t0.bin"
printf 'MBSJR' > "$parts/j1-r0-t1.bin"

"$mbstudy" inspect "$out" > "$dir/inspect.txt" 2>&1 || { cat "$dir/inspect.txt"; fail "inspect failed"; }
grep -q "samples done: [1-9]" "$dir/inspect.txt" || { cat "$dir/inspect.txt"; fail "inspect: no samples done"; }

"$mbstudy" run "$spec" --output "$out" --resume --quiet 2> "$dir/resume.txt"
code=$?
cat "$dir/resume.txt"
[ $code -eq 0 ] || fail "--resume failed (exit code $code)"
for j in j1-r0-t0.bin j1-r0-t1.bin; do
  grep -q "warning: .*/$j: a journal cut short in its header.*set aside as .*/$j.damaged" \
    "$dir/resume.txt" || fail "no warning that $j was set aside"
done
grep -q "warning: .*$(basename "$journal"): 1 damaged record skipped (its sample will be recomputed)" \
  "$dir/resume.txt" || fail "no warning about the damaged record"
[ -d "$parts" ] && fail "journals left after a complete run: $(ls "$parts")"
/usr/bin/python3 "$compare" "$dir/full.h5" "$out" --ignore /status/wall_time
rc=$?
[ $rc -eq 77 ] && exit 77
[ $rc -eq 0 ] || fail "the resumed study differs from the uninterrupted one"

# a whole header of garbage: refused as before (it might be anything), left in place
out="$dir/refused.h5"
parts="$out.parts"
"$mbstudy" run "$spec" --output "$out" --part 0/2 --quiet || fail "the first half failed"
printf 'this is not a journal of mbstudy, not at all\n' > "$parts/j1-r0-t0.bin"
if "$mbstudy" run "$spec" --output "$out" --resume --quiet 2> "$dir/refused.txt"; then
  fail "--resume accepted a journal with a header of garbage"
fi
cat "$dir/refused.txt"
grep -q "j1-r0-t0.bin: not a journal of completed samples" "$dir/refused.txt" ||
  fail "the refusal does not name the journal"
[ -f "$parts/j1-r0-t0.bin" ] || fail "the journal with a header of garbage was moved"
echo "PASS: damaged and cut-short journals skipped or set aside; resumed to the uninterrupted result"
