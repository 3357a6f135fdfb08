#!/bin/sh
# How the OpenSim paper's findings (tests/studies/check_posture.py) depend on the posture study's
# choices: the default sweep (studies/specs/posture_sweep.yaml) and its gait2392 version, each
# rerun with one choice changed, one Markdown row per run. Run from the repository after a release
# build (about 45 s per variant on two cores):
#   scripts/posture_sensitivity.sh [--magnitude GRID] [variant ...]  > table.md
# A variant is NAME=SETTINGS, SETTINGS a ';'-separated list of posture keys (key: value) that
# replace or extend the study file's `posture:` section; without arguments the list below.
# --magnitude replaces the displacements of every run, e.g. "{from: 0, to: 0.2, step: 0.005}"
# for a quicker, coarser table (the default files go by 1 mm).
set -eu
cd "$(dirname "$0")/.."
common=""
if [ "${1:-}" = --magnitude ]; then
    common="magnitude: $2"
    shift 2
fi
py=/usr/bin/python3
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export OPENBLAS_NUM_THREADS=1
if [ $# -eq 0 ]; then
    set -- "default=" \
        "trunk lean 0.25 x knee flexion=trunk_lean_ratio: 0.25" \
        "trunk lean 0.5 x knee flexion=trunk_lean_ratio: 0.5" \
        "trunk lean 1 x knee flexion=trunk_lean_ratio: 1" \
        "centre of mass 2 cm ahead of the ankles=com_ahead: 0.02" \
        "centre of mass 5 cm ahead of the ankles=com_ahead: 0.05" \
        "perturbation over 0.3 s=perturbation: {duration: 0.3, profile: smooth_step}" \
        "perturbation over 1 s=perturbation: {duration: 1.0, profile: smooth_step}" \
        "cosine profile=perturbation: {duration: 0.5, profile: cosine}" \
        "fall at 0.9 of pelvis height=fall_fraction: 0.9" \
        "trunk lean 1 x, perturbation over 1 s=trunk_lean_ratio: 1;perturbation: {duration: 1.0, profile: smooth_step}"
fi
shared=$(cd .. && pwd)/shared/models/gait2392_thelen2003muscle.osim
# the study file with SETTINGS applied to its posture section
variant_spec() {  # source settings model_line > spec
    $py - "$1" "$2" "$3" <<'EOF'
import sys
src, settings, model = sys.argv[1:4]
new = [s.strip() for s in settings.split(";") if s.strip()]
keys = {s.split(":")[0].strip() for s in new}
out, in_posture = [], False
for line in open(src):
    if line.startswith("model:") and model:
        line = "model: %s\n" % model
    if in_posture and line.startswith("  ") and line.strip().split(":")[0] in keys:
        continue
    out.append(line)
    if line.startswith("posture:"):
        in_posture = True
        out.extend("  %s\n" % s for s in new)
    elif line[:1].strip():
        in_posture = line.startswith("posture:")
sys.stdout.write("".join(out))
EOF
}
echo "| choice changed | model | 1 | 2 | 3 | 4 | 5 | free: mean index, anterior / posterior, at 1, 15, 30, 45° | locked: stands up to (cm), anterior; posterior |"
echo "|---|---|:-:|:-:|:-:|:-:|:-:|---|---|"
for v in "$@"; do
    name=${v%%=*}
    settings=${v#*=}
    [ -n "$common" ] && settings="$common;$settings"
    for model in human gait2392; do
        if [ "$model" = human ]; then
            variant_spec studies/specs/posture_sweep.yaml "$settings" "" > "$out/spec.yaml"
        elif [ -f "$shared" ]; then
            variant_spec studies/specs/posture_gait2392.yaml "$settings" "$shared" > "$out/spec.yaml"
        else
            echo "| $name | gait2392 | skipped: $shared not found |"
            continue
        fi
        if ! build/mbstudy run "$out/spec.yaml" --output "$out/run.h5" --force --quiet \
            > "$out/log" 2>&1; then
            echo "| $name | $model | failed: $(tail -1 "$out/log") |"
            continue
        fi
        $py tests/studies/check_posture.py "$out/run.h5" --json | $py -c '
import json, sys
r = json.load(sys.stdin)
f = r["findings"]
if "free_mean_si" not in r and "locked_range_cm" not in r:
    print("| %s | %s | no sample succeeded: %s |||||||" % (sys.argv[1], sys.argv[2], r.get("first_failure", "")))
    sys.exit(0)
mark = lambda k: "yes" if f.get(k) else "**no**"
m = r["free_mean_si"]
free = " · ".join("%.3f / %.3f" % (a, p) for a, p in zip(m["anterior"], m["posterior"]))
lr = r["locked_range_cm"]
locked = "%s; %s" % ("/".join("%g" % x for x in lr["anterior"]),
                     "/".join("%g" % x for x in lr["posterior"]))
print("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
    sys.argv[1], sys.argv[2], mark("1"), mark("2"), mark("3"), mark("4"), mark("5"), free, locked))
' "$name" "$model"
    done
done
