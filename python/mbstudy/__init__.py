"""mbstudy from Python: a study's result file as pandas and numpy, OpenSim storage files as
DataFrames, and study files written from dictionaries.

    import mbstudy
    s = mbstudy.open("results/study.h5")
    s.samples                  # one row per sample: parameters, status, scalars (units in .attrs)
    q = s.trajectory("q")      # samples x frames x components, named axes, its time and units
    q.component("knee_angle_r")[s.ok]           # every successful sample's knee angle
    s.results["posture"]       # the study type's own results (posture table, sensitivity, ...)
    s.provenance               # model, spec, seed, integrator, version, ...

Pure Python over h5py, numpy and pandas (Debian's python3-h5py, python3-numpy,
python3-pandas). The file layout is io/FORMAT.md.
"""
from .storage import read_sto, write_sto
from .spec import write_study, study_text
from .study import Study, Trajectory, open

__all__ = ["open", "Study", "Trajectory", "read_sto", "write_sto", "write_study", "study_text"]
__version__ = "0.1.0"
