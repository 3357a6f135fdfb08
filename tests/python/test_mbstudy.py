"""The Python package (python/mbstudy) against the files mbstudy writes:

    MBSTUDY=build/mbstudy PYTHONPATH=python /usr/bin/python3 -m unittest discover -s tests/python

- a complete study: the samples table equals the file's datasets column by column (parameters,
  status, scalars, with their units), trajectories carry their named axes and units;
- a study written from a dict runs, and its samples lie within the dict's distributions;
- OpenSim storage files: a DataFrame written and read back bit for bit; an mbstudy export read
  by its state-path columns, equal to the study's trajectory; a .mot without a version line is
  in degrees;
- a study stopped part way opens (complete False) with what was merged before the stop; a
  running one opens from its journals (running True);
- the study types' own results: Sobol' indices of the Ishigami function against their closed
  form, through Study.results.
Skipped when pandas, numpy or h5py are missing."""
import math
import os
import signal
import subprocess
import tempfile
import time
import unittest

try:
    import h5py
    import numpy as np
    import pandas as pd
    import mbstudy
    HAVE = True
except ImportError as e:  # pragma: no cover
    HAVE = False
    WHY = str(e)

HERE = os.path.dirname(os.path.abspath(__file__))
SPECS = os.path.join(HERE, "..", "studies")
MBS = os.environ.get("MBSTUDY", os.path.join(HERE, "..", "..", "build", "mbstudy"))
ENV = dict(os.environ, OPENBLAS_NUM_THREADS="1")


def run(*args, **kw):
    return subprocess.run([MBS] + list(args), capture_output=True, text=True, env=ENV, **kw)


@unittest.skipUnless(HAVE, "pandas, numpy or h5py missing" if not HAVE else "")
class TestStudy(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="mbs_python_")
        cls.dir = cls.tmp.name
        cls.pend = os.path.join(cls.dir, "pendulum.h5")
        r = run("run", os.path.join(SPECS, "pendulum_mc.yaml"), "--quiet", "--output", cls.pend)
        assert r.returncode == 0, r.stderr

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_samples_table(self):
        with mbstudy.open(self.pend) as s, h5py.File(self.pend, "r") as f:
            self.assertTrue(s.complete)
            df = s.samples
            names = [n.decode() for n in f["parameter_names"][()]]
            self.assertEqual(list(df.index), list(f["samples"][()]))
            self.assertEqual(s.parameters, names)
            for k, n in enumerate(names):
                np.testing.assert_array_equal(df[n].to_numpy(), f["parameters"][:, k])
            units = [u if isinstance(u, str) else u.decode() for u in f["parameters"].attrs["units"]]
            self.assertEqual([df.attrs["units"][n] for n in names], units)
            np.testing.assert_array_equal(df["status"].to_numpy(), f["status/code"][()])
            np.testing.assert_array_equal(df["done"].to_numpy(), f["status/done"][()] == 1)
            self.assertEqual(s.scalars, ["q1_final", "q2_max", "rod2_lowest"])
            for n in s.scalars:
                np.testing.assert_array_equal(df[n].to_numpy(), f["scalars/" + n][()])
                self.assertEqual(df.attrs["units"][n], f["scalars/" + n].attrs["units"])
            self.assertEqual(s.provenance["study"], "monte_carlo")
            self.assertEqual(s.provenance["mbstudy_format"], "1")
            self.assertTrue(s.ok.all())

    def test_trajectories(self):
        with mbstudy.open(self.pend) as s, h5py.File(self.pend, "r") as f:
            self.assertIn("q", s.trajectories)
            self.assertIn("bodies/rod2/position", s.trajectories)
            q = s.trajectory("q")
            self.assertEqual(q.dims, ("sample", "frame", "component"))
            self.assertEqual(q.components, ["q1", "q2"])
            self.assertEqual(q.units, "rad or m")
            self.assertIsInstance(q.units, str)
            np.testing.assert_array_equal(q.time, f["time"][()])
            np.testing.assert_array_equal(np.asarray(q), f["trajectories/q"][()])
            np.testing.assert_array_equal(q.component("q2"), f["trajectories/q"][:, :, 1])
            one = q.sample(5)
            self.assertEqual(list(one.columns), ["q1", "q2"])
            np.testing.assert_array_equal(one.index.to_numpy(), f["time"][()])
            with self.assertRaises(KeyError):
                q.component("q3")
            with self.assertRaises(KeyError):
                s.trajectory("nothing")

    def test_write_study_runs(self):
        spec = {"model": "double_pendulum",
                "simulation": {"duration": 0.5, "accuracy": 1e-6, "output_interval": 0.1},
                "parameters": [{"path": "/bodyset/rod1/mass",
                                "distribution": {"type": "uniform", "low": 0.5, "high": 1.5}}],
                "outputs": {"trajectories": ["q"]},
                "sampling": {"count": 12, "seed": 5, "method": "lhs"},
                "output": "from_python.h5"}
        path = mbstudy.write_study(spec, os.path.join(self.dir, "from_python.yaml"))
        r = run("run", path, "--quiet")
        self.assertEqual(r.returncode, 0, r.stderr)
        with mbstudy.open(os.path.join(self.dir, "from_python.h5")) as s:
            m = s.samples["/bodyset/rod1/mass"]
            self.assertEqual(len(m), 12)
            self.assertTrue(((m >= 0.5) & (m <= 1.5)).all())
            # LHS: one draw in each twelfth of the range
            bins = np.floor((m.to_numpy() - 0.5) * 12).astype(int)
            self.assertEqual(sorted(bins), list(range(12)))
        with self.assertRaises(ValueError):
            mbstudy.study_text({"model": "double_pendulum"})

    def test_component_units(self):
        # the built-in human has translational (pelvis_tx, ty, tz) and rotational coordinates:
        # each component of q and u carries its own unit, by the motion type model info shows
        spec = {"model": "human",
                "simulation": {"duration": 0.02, "accuracy": 1e-3, "output_interval": 0.01},
                "posture": {"knee_flexion": [1], "direction": ["anterior"], "magnitude": [0],
                            "mode": ["locked"]},
                "outputs": {"trajectories": ["q", "u"]},
                "output": "human_units.h5"}
        path = mbstudy.write_study(spec, os.path.join(self.dir, "human_units.yaml"))
        r = run("run", path, "--quiet")
        self.assertEqual(r.returncode, 0, r.stderr)
        info = run("model", "info", "human")
        self.assertEqual(info.returncode, 0, info.stderr)
        motion = {}
        lines = info.stdout.splitlines()
        start = next(i for i, l in enumerate(lines) if l.startswith("coordinates:"))
        for l in lines[start + 2:]:
            f = l.split()
            if len(f) < 3:
                break
            motion[f[0]] = f[2]
        self.assertIn("translational", motion.values())
        self.assertIn("rotational", motion.values())
        with mbstudy.open(os.path.join(self.dir, "human_units.h5")) as s:
            q, u = s.trajectory("q"), s.trajectory("u")
            self.assertEqual(sorted(q.components), sorted(motion))
            for c, unit in zip(q.components, q.component_units):
                self.assertIsInstance(unit, str)
                self.assertEqual(unit, "rad" if motion[c] == "rotational" else "m", c)
            for c, unit in zip(u.components, u.component_units):
                self.assertEqual(unit, "rad/s" if motion[c] == "rotational" else "m/s", c)
            self.assertEqual(q.sample(0).attrs["units"]["pelvis_ty"], "m")

    def test_export_posture_sample_model(self):
        # a posture sample's model (platform and contact added) as an .osim with its motion:
        # the platform displaced as the sample's magnitude and direction say (0 deg anterior, +x;
        # 90 deg the subject's right, +z), the coordinates' defaults at the sample's first frame,
        # and the motion's columns the model's state paths
        import math
        import xml.etree.ElementTree as ET
        spec = {"model": "human",
                "simulation": {"duration": 0.05, "accuracy": 1e-4, "output_interval": 0.01},
                "posture": {"knee_flexion": [1, 30], "direction": ["anterior", "right"],
                            "magnitude": [0.04], "mode": ["locked"]},
                "outputs": {"trajectories": ["q", "u"]},
                "output": "posture_export.h5"}
        path = mbstudy.write_study(spec, os.path.join(self.dir, "posture_export.yaml"))
        r = run("run", path, "--quiet")
        self.assertEqual(r.returncode, 0, r.stderr)
        h5 = os.path.join(self.dir, "posture_export.h5")
        out = os.path.join(self.dir, "posture_export_sample")
        for i in range(4):
            r = run("export", h5, "--sample", str(i), "--format", "osim", "--out", out)
            self.assertEqual(r.returncode, 0, r.stderr)
            with mbstudy.open(h5) as s:
                p = s.samples.loc[i]
                q, u = s.trajectory("q"), s.trajectory("u")
                self.assertIn('<CustomJoint name="platform_joint">', s.model_document)
            mag, d = p["posture/magnitude"], math.radians(p["posture/direction"])
            want = {"platform_x": mag * math.cos(d), "platform_y": 0.0,
                    "platform_z": mag * math.sin(d)}
            # OpenSim's element names such as HuntCrossleyForce::ContactParametersSet are not
            # namespace-well-formed for ElementTree: read them with "::" as "__"
            with open(os.path.join(out, f"sample_{i}.osim"), encoding="utf-8") as fh:
                root = ET.fromstring(fh.read().replace("::", "__"))
            got = {m.get("name"): float(m.find("scale").text)
                   for m in root.iter("MultiplierFunction") if m.get("name") in want}
            self.assertEqual(sorted(got), sorted(want))
            for k in want:
                self.assertAlmostEqual(got[k], want[k], places=12, msg=k)
            coords = {c.get("name"): c for c in root.iter("Coordinate")}
            self.assertEqual(sorted(coords), sorted(q.components))
            for k, c in enumerate(q.components):
                self.assertEqual(float(coords[c].find("default_value").text),
                                 q.values[i, 0, k], c)
                self.assertEqual(float(coords[c].find("default_speed_value").text),
                                 u.values[i, 0, u.components.index(c)], c)
            # the knee at the sample's flexion (the posture's own angle, negative in OpenSim)
            self.assertAlmostEqual(float(coords["knee_angle_r"].find("default_value").text),
                                   -math.radians(p["posture/knee_flexion"]), places=6)
            paths = {f"/jointset/{j.get('name')}/{c.get('name')}/value"
                     for j in root.iter() if j.tag.endswith("Joint") and j.get("name")
                     for c in j.iter("Coordinate")}
            motion = mbstudy.read_sto(os.path.join(out, f"sample_{i}.sto"))
            cols = [c for c in motion.columns if c.endswith("/value")]
            self.assertEqual(sorted(cols), sorted(paths))
            np.testing.assert_array_equal(motion["time"].to_numpy(), q.time)
            knee = "/jointset/knee_r/knee_angle_r/value"
            np.testing.assert_array_equal(motion[knee].to_numpy(),
                                          q.values[i, :, q.components.index("knee_angle_r")])
            # mbstudy reads its own export back as an OpenSim model
            info = run("model", "info", os.path.join(out, f"sample_{i}.osim"))
            self.assertEqual(info.returncode, 0, info.stderr)
            self.assertIn("platform_joint", info.stdout)
        # a study without a model document and without its model: a clear error
        r = run("export", self.pend, "--sample", "0", "--format", "osim")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--format osim --out DIR", r.stderr)

    def test_sto_round_trip(self):
        rng = np.random.default_rng(1)
        df = pd.DataFrame(rng.normal(size=(7, 3)) * 1e3, columns=["time", "a_x", "b/y"])
        df.iloc[2, 1] = np.nan
        df.attrs.update(name="made in python", in_degrees=True, header={"source": "test"})
        p = mbstudy.write_sto(df, os.path.join(self.dir, "rt.sto"))
        back = mbstudy.read_sto(p)
        self.assertEqual(list(back.columns), list(df.columns))
        self.assertEqual(back.to_numpy().tobytes(), df.to_numpy().tobytes())
        self.assertEqual(back.attrs["name"], "made in python")
        self.assertTrue(back.attrs["in_degrees"])
        self.assertEqual(back.attrs["header"], {"source": "test"})
        with self.assertRaises(ValueError):
            mbstudy.write_sto(pd.DataFrame({"time": [0.0], "a b": [1.0]}), p)

    def test_read_exported_states(self):
        out = os.path.join(self.dir, "s3.sto")
        r = run("export", self.pend, "--sample", "3", "--format", "sto", "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        st = mbstudy.read_sto(out)
        self.assertFalse(st.attrs["in_degrees"])
        with mbstudy.open(self.pend) as s:
            q = s.trajectory("q")
            np.testing.assert_allclose(st["/jointset/pin2/q2/value"].to_numpy(),
                                       q.sample(3)["q2"].to_numpy(), rtol=1e-15, atol=0)
            np.testing.assert_array_equal(st["time"].to_numpy(), q.time)

    def test_mot_without_version_in_degrees(self):
        p = os.path.join(self.dir, "old.mot")
        with open(p, "w") as f:
            f.write("Coordinates\nnRows=2\nnColumns=2\nendheader\ntime\tknee\n0\t10\n1\t20\n")
        m = mbstudy.read_sto(p)
        self.assertTrue(m.attrs["in_degrees"])
        self.assertEqual(m["knee"].tolist(), [10.0, 20.0])
        bad = os.path.join(self.dir, "bad.sto")
        with open(bad, "w") as f:
            f.write("x\nendheader\ntime\ta\n0\t1\t2\n")
        with self.assertRaisesRegex(ValueError, "bad.sto:4"):
            mbstudy.read_sto(bad)

    def _start_long(self, out):
        return subprocess.Popen([MBS, "run", os.path.join(SPECS, "pendulum_long.yaml"),
                                 "--output", out, "--quiet", "--threads", "1"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)

    def _wait_journals(self, out, nbytes):
        for _ in range(1000):
            try:
                size = sum(os.path.getsize(os.path.join(out + ".parts", n))
                           for n in os.listdir(out + ".parts") if n.endswith(".bin"))
            except FileNotFoundError:
                size = 0
            if size >= nbytes:
                return
            time.sleep(0.02)
        self.fail("no journals")

    def test_stopped_study(self):
        out = os.path.join(self.dir, "stopped.h5")
        p = self._start_long(out)
        self._wait_journals(out, 60000)
        p.send_signal(signal.SIGTERM)
        self.assertEqual(p.wait(60), 3)
        with mbstudy.open(out) as s:
            self.assertFalse(s.complete)
            self.assertIn("stopped", s.note)
            df = s.samples
            done = df["done"].to_numpy()
            self.assertGreater(done.sum(), 0)
            q = s.trajectory("q")
            self.assertTrue(np.isfinite(q.values[done]).all())
            self.assertEqual(len(df), 800)

    def test_running_study(self):
        out = os.path.join(self.dir, "running.h5")
        p = self._start_long(out)
        try:
            self._wait_journals(out, 60000)
            with mbstudy.open(out) as s:
                self.assertFalse(s.complete)
                df = s.samples
                self.assertGreater(len(df), 0)
                if s.running:  # from the journals: parameters and scalars unnamed
                    self.assertIn("p0", df.columns)
                    self.assertTrue((df["status"] == 0).all())
        finally:
            p.send_signal(signal.SIGTERM)
            p.wait(60)

    def test_sensitivity_results(self):
        out = os.path.join(self.dir, "sobol.h5")
        r = run("run", os.path.join(SPECS, "sobol_ishigami.yaml"), "--quiet", "--output", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        with mbstudy.open(out) as s:
            sens = s.results["sensitivity"]
            self.assertEqual(sens["attrs"]["method"], "sobol")
            self.assertEqual(sens["parameter_names"], ["/x1", "/x2", "/x3"])
            y = sens["scalars"]["y"]
            # Ishigami, a = 7, b = 0.1: closed-form first-order and total indices
            a, b = 7.0, 0.1
            pi = math.pi
            v1 = 0.5 * (1 + b * pi ** 4 / 5) ** 2
            v2 = a * a / 8
            v13 = b * b * pi ** 8 * (1 / 18 - 1 / 50)
            v = v1 + v2 + v13
            s1 = [v1 / v, v2 / v, 0.0]
            st = [(v1 + v13) / v, v2 / v, v13 / v]
            for k in range(3):
                self.assertLess(abs(y["S1"][k] - s1[k]), max(3 * y["S1_conf"][k], 0.02))
                self.assertLess(abs(y["ST"][k] - st[k]), max(3 * y["ST_conf"][k], 0.02))

    def test_posture_results(self):
        out = os.path.join(self.dir, "posture.h5")
        r = run("run", os.path.join(SPECS, "posture_small.yaml"), "--quiet", "--output", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        with mbstudy.open(out) as s, h5py.File(out, "r") as f:
            t = s.results["posture"]
            g = f["posture"]
            self.assertEqual(len(t), g["stability_index"].size)
            self.assertEqual(sorted(set(t["mode"])), sorted(m.decode() for m in g["mode"][()]))
            ok = np.isfinite(t["time_to_fall"].to_numpy())
            self.assertGreater(ok.sum(), 0)
            # the index is 1 - exp(-T^2) of the cell's time to fall
            np.testing.assert_allclose(t["stability_index"].to_numpy()[ok],
                                       1 - np.exp(-t["time_to_fall"].to_numpy()[ok] ** 2),
                                       rtol=1e-12)
            # each cell's sample has the cell's parameters
            df = s.samples
            for _, row in t[t["sample"] >= 0].iterrows():
                smp = df.loc[int(row["sample"])]
                self.assertAlmostEqual(smp["posture/magnitude"], row["magnitude"], places=12)
                self.assertAlmostEqual(smp["posture/knee_flexion"], row["knee_flexion"],
                                       places=12)


if __name__ == "__main__":
    unittest.main()
