#!/bin/sh
# mbstudy simulate --external-loads beyond the end of the force data: a warning that names the
# data file, its time range and what is applied after it (the spline's end tangent); none when
# the simulation stays inside the data.
# usage: check_simulate_loads.sh MBSTUDY
set -u
mbstudy=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/push.mot" <<'DATA'
push
version=1
nRows=3
nColumns=10
inDegrees=no
endheader
time	f_vx	f_vy	f_vz	f_px	f_py	f_pz	f_tx	f_ty	f_tz
0	1	0	0	0	0	0	0	0	0
0.25	2	0	0	0	0	0	0	0	0
0.5	3	0	0	0	0	0	0	0	0
DATA
cat > "$dir/push.xml" <<'XML'
<?xml version="1.0" encoding="UTF-8" ?>
<OpenSimDocument Version="40000">
  <ExternalLoads name="push">
    <objects>
      <ExternalForce name="push">
        <applied_to_body>rod1</applied_to_body>
        <force_expressed_in_body>ground</force_expressed_in_body>
        <point_expressed_in_body>rod1</point_expressed_in_body>
        <force_identifier>f_v</force_identifier>
        <point_identifier>f_p</point_identifier>
        <torque_identifier>f_t</torque_identifier>
        <data_source_name>push.mot</data_source_name>
      </ExternalForce>
    </objects>
    <datafile>push.mot</datafile>
  </ExternalLoads>
</OpenSimDocument>
XML
"$mbstudy" simulate double_pendulum --duration 1 --external-loads "$dir/push.xml" \
  --out "$dir/a.sto" > "$dir/a.txt" 2>&1 || { cat "$dir/a.txt"; echo "FAIL: simulate"; exit 1; }
grep -q "warning: the external loads' data (.*push.mot) cover t = 0 .. 0.5 s and the simulation runs over 0 .. 1 s: .*end tangent" "$dir/a.txt" ||
  { cat "$dir/a.txt"; echo "FAIL: no warning past the end of the data"; exit 1; }
"$mbstudy" simulate double_pendulum --duration 0.5 --external-loads "$dir/push.xml" \
  --out "$dir/b.sto" > "$dir/b.txt" 2>&1 || { cat "$dir/b.txt"; echo "FAIL: simulate"; exit 1; }
grep -q "external loads' data" "$dir/b.txt" && { cat "$dir/b.txt"; echo "FAIL: a warning inside the data"; exit 1; }
grep "warning: the external" "$dir/a.txt"
echo "PASS"
