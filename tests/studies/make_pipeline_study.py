#!/usr/bin/python3
"""Writes a pipeline study of synthetic subjects into DIR (check_pipeline.py checks its result):

    make_pipeline_study.py DIR [--draws N] [--params] [--output NAME]

Each subject is a pendulum (a rod on a pin about Ground's z, its own length, mass and inertia,
markers on the rod) swinging as q(t) = A sin(2 pi f t) over 1 s at 100 frames per second; its
markers' trajectories are written from that motion (mm, as motion capture writes them). The
study chains OpenSim's InverseKinematicsTool and InverseDynamicsTool (setup templates with
${folder} and ${trial}). Subject s03 also has a trial whose marker file is missing: that sample
fails with its message and the others go on. With several draws the markers get noise; with
--params they do not, and each draw takes the rod's mass as a factor on its subject's own
(uniform 0.8 .. 1.2) and its inertia Izz as a value (uniform 0.1 .. 0.2 kg m^2), carried into
the models the tools read. The truth (each subject's A, f, L, m, c, I) is in DIR/truth.txt.
Standard library only."""
import math
import os
import sys

SUBJECTS = [  # name, amplitude rad, frequency Hz, marker length m, mass kg, com m, Izz kg m^2
    ("s01", 0.5, 0.8, 0.9, 3.0, 0.45, 0.2),
    ("s02", 0.35, 1.1, 0.8, 2.5, 0.40, 0.12),
    ("s03", 0.6, 0.6, 1.0, 4.0, 0.52, 0.3),
]
G = 9.80665

MODEL = """<?xml version="1.0" encoding="UTF-8" ?>
<OpenSimDocument Version="40000">
  <Model name="pendulum_{name}">
    <Ground name="ground"/>
    <gravity>0 -{g} 0</gravity>
    <BodySet name="bodyset"><objects>
      <Body name="rod"><mass>{m}</mass><mass_center>0 -{c} 0</mass_center>
        <inertia>{I} {I} {I} 0 0 0</inertia></Body>
    </objects></BodySet>
    <JointSet name="jointset"><objects>
      <PinJoint name="pin">
        <socket_parent_frame>/ground</socket_parent_frame>
        <socket_child_frame>/bodyset/rod</socket_child_frame>
        <coordinates><Coordinate name="q"><default_value>0</default_value></Coordinate></coordinates>
      </PinJoint>
    </objects></JointSet>
    <MarkerSet name="markerset"><objects>
      <Marker name="mid"><socket_parent_frame>/bodyset/rod</socket_parent_frame>
        <location>0.03 -{half} 0</location></Marker>
      <Marker name="tip"><socket_parent_frame>/bodyset/rod</socket_parent_frame>
        <location>0 -{L} 0.02</location></Marker>
    </objects></MarkerSet>
  </Model>
</OpenSimDocument>
"""

IK = """<?xml version="1.0" encoding="UTF-8" ?>
<OpenSimDocument Version="40000">
  <InverseKinematicsTool name="${subject}_${trial}">
    <model_file>${model}</model_file>
    <marker_file>${folder}/${trial}.trc</marker_file>
    <time_range>0 1</time_range>
    <accuracy>1e-9</accuracy>
    <IKTaskSet><objects>
      <IKMarkerTask name="mid"><apply>true</apply><weight>1</weight></IKMarkerTask>
      <IKMarkerTask name="tip"><apply>true</apply><weight>1</weight></IKMarkerTask>
    </objects></IKTaskSet>
    <output_motion_file>ik.mot</output_motion_file>
    <report_errors>true</report_errors>
  </InverseKinematicsTool>
</OpenSimDocument>
"""

ID = """<?xml version="1.0" encoding="UTF-8" ?>
<OpenSimDocument Version="40000">
  <InverseDynamicsTool name="${subject}_${trial}">
    <model_file>${model}</model_file>
    <time_range>0 1</time_range>
    <coordinates_file>unused.mot</coordinates_file>
    <lowpass_cutoff_frequency_for_coordinates>-1</lowpass_cutoff_frequency_for_coordinates>
    <output_gen_force_file>id.sto</output_gen_force_file>
  </InverseDynamicsTool>
</OpenSimDocument>
"""


def rotz(q, p):
    c, s = math.cos(q), math.sin(q)
    return (c * p[0] - s * p[1], s * p[0] + c * p[1], p[2])


def write_trc(path, name, times, markers):
    """markers: list of (name, positions per frame in m); written in mm"""
    with open(path, "w") as f:
        f.write(f"PathFileType\t4\t(X/Y/Z)\t{os.path.basename(path)}\n")
        f.write("DataRate\tCameraRate\tNumFrames\tNumMarkers\tUnits\tOrigDataRate\t"
                "OrigDataStartFrame\tOrigNumFrames\n")
        n = len(times)
        f.write(f"100\t100\t{n}\t{len(markers)}\tmm\t100\t1\t{n}\n")
        f.write("Frame#\tTime\t" + "\t".join(m[0] + "\t\t" for m in markers) + "\n")
        f.write("\t\t" + "\t".join(f"X{k + 1}\tY{k + 1}\tZ{k + 1}" for k in range(len(markers)))
                + "\n\n")
        for i, t in enumerate(times):
            vals = []
            for _, pos in markers:
                vals += [f"{1000 * v:.9f}" for v in pos[i]]
            f.write(f"{i + 1}\t{t:.6f}\t" + "\t".join(vals) + "\n")


def main():
    args = sys.argv[1:]
    if not args:
        print(__doc__)
        return 2
    out = args[0]
    draws = int(args[args.index("--draws") + 1]) if "--draws" in args else 1
    output = args[args.index("--output") + 1] if "--output" in args else "pipeline.h5"
    params = "--params" in args
    for sub in ("setups", "a", "b"):  # a/, b/: the result files of two runs
        os.makedirs(os.path.join(out, sub), exist_ok=True)
    with open(os.path.join(out, "setups", "ik.xml"), "w") as f:
        f.write(IK)
    with open(os.path.join(out, "setups", "id.xml"), "w") as f:
        f.write(ID)
    times = [i / 100 for i in range(101)]
    truth = []
    for name, A, freq, L, m, c, I in SUBJECTS:
        folder = os.path.join(out, "subjects", name)
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "model.osim"), "w") as f:
            f.write(MODEL.format(name=name, g=G, m=m, c=c, I=I, L=L, half=L / 2))
        w = 2 * math.pi * freq
        q = [A * math.sin(w * t) for t in times]
        mid = [rotz(x, (0.03, -L / 2, 0)) for x in q]
        tip = [rotz(x, (0, -L, 0.02)) for x in q]
        write_trc(os.path.join(folder, "swing.trc"), name, times, [("mid", mid), ("tip", tip)])
        truth.append(f"{name} {A!r} {freq!r} {L!r} {m!r} {c!r} {I!r}")
    with open(os.path.join(out, "truth.txt"), "w") as f:
        f.write("\n".join(truth) + "\n")
    noise = "  noise: {markers: 0.001, placement: 0.002}\n" if draws > 1 and not params else ""
    drawn = ("parameters:\n"
             "  - {path: /bodyset/rod/mass, scale: {type: uniform, low: 0.8, high: 1.2}}\n"
             "  - {path: '/bodyset/rod/inertia[2]', distribution: {type: uniform, low: 0.1, "
             "high: 0.2}}\n") if params else ""
    # s02 names no model: it takes the study's (generic) model, which is its own
    subjects = "".join(
        f"    - {{name: {n}, folder: subjects/{n}, "
        + ("" if n == "s02" else f"model: subjects/{n}/model.osim, ")
        + f"trials: [swing{', missing' if n == 's03' else ''}]}}\n" for n, *_ in SUBJECTS)
    with open(os.path.join(out, "pipeline.yaml"), "w") as f:
        f.write(f"""# synthetic subjects: pendulums swinging (make_pipeline_study.py)
model: subjects/s02/model.osim
pipeline:
  subjects:
{subjects}  stages: {{ik: setups/ik.xml, id: setups/id.xml}}
  frames: 51
  draws: {draws}
  seed: 7
{noise}{drawn}execution: {{allow_failed_samples: true}}   # s03's trial 'missing' fails on purpose
output: {output}
""")
    return 0


if __name__ == "__main__":
    sys.exit(main())
