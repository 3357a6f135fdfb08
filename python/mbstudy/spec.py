"""Study files from Python dictionaries: the same keys as a study file (README, "Studies")."""
import json

try:
    import yaml  # python3-yaml: block style, easier to read
except ImportError:  # pragma: no cover
    yaml = None


def study_text(spec):
    """The YAML text of a study given as a dict (JSON flow style, which is YAML too, when
    PyYAML is absent)."""
    if not isinstance(spec, dict):
        raise TypeError("a study is a dict of its sections (model, simulation, ...)")
    for key in ("model", "output"):
        if key not in spec:
            raise ValueError(f"a study needs '{key}'")
    if yaml is not None:
        return yaml.safe_dump(spec, sort_keys=False, default_flow_style=None)
    return json.dumps(spec, indent=2) + "\n"


def write_study(spec, path):
    """Write a study file from a dict; returns the path. `mbstudy run PATH` runs it (relative
    paths in it are taken from the file's folder)."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(study_text(spec))
    return path
