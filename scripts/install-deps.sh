#!/bin/sh
# Install the Debian packages mbstudy needs, only those missing (idempotent).
#
#   scripts/install-deps.sh           build and run dependencies
#   scripts/install-deps.sh --tests   also what the test suite and the comparison engines need
#
# Set MBS_NO_APT=1 to skip this step, e.g. on a cluster where the dependencies come from
# environment modules (see README.md, "Building on a cluster").
set -eu

if [ "${MBS_NO_APT:-0}" = "1" ]; then
    echo "install-deps: MBS_NO_APT=1, not installing packages"
    exit 0
fi

packages="cmake make gcc pkg-config
  libopenmpi-dev openmpi-bin
  libhdf5-openmpi-dev hdf5-tools
  liblapacke-dev libopenblas-dev
  libsundials-dev
  libxml2-dev libfyaml-dev librandom123-dev zlib1g-dev libnlopt-dev
  libcairo2-dev
  python3 python3-h5py python3-numpy python3-pandas python3-yaml"

# optional: installed when possible; the step that needs them is skipped without them
optional=""
if [ "${1:-}" = "--tests" ]; then
    # g++ builds the Simbody cross-check; h5py reads result files in tests; Slurm and munge
    # for the cluster test (a single-node cluster the test starts and stops itself).
    packages="$packages g++ valgrind libsimbody-dev libmujoco-dev slurm-wlm munge"
    # clang with libFuzzer's runtime (libclang-rt-dev) and LLVM's OpenMP (libomp-dev): the
    # fuzzing phase of the tests (tests/fuzz), which is skipped where clang is missing
    optional="clang libclang-rt-dev libomp-dev"
fi

if ! command -v dpkg-query >/dev/null 2>&1; then
    echo "install-deps: this is not a Debian-like system; install the equivalents of:" >&2
    echo "  $packages" >&2
    exit 1
fi

# the Python package (python/mbstudy) importable by Debian's system Python: a .pth file in the
# local site folder naming this checkout's python/ folder (as an editable install does)
install_python_package() {
    here=$(cd "$(dirname "$0")/.." && pwd)
    site=$(/usr/bin/python3 -c 'import sysconfig; print(sysconfig.get_path("purelib", "posix_local"))' 2>/dev/null ||
           /usr/bin/python3 -c 'import site; print([p for p in site.getsitepackages() if p.startswith("/usr/local")][0])' 2>/dev/null)
    if [ -n "$site" ] && [ "$(id -u)" -eq 0 ] && mkdir -p "$site" 2>/dev/null; then
        echo "$here/python" > "$site/mbstudy.pth"
        echo "install-deps: the Python package mbstudy: $here/python (via $site/mbstudy.pth)"
    else
        echo "install-deps: to import mbstudy from Python: export PYTHONPATH=$here/python"
    fi
}

# the packages of a list that are not installed
not_installed() {
    for p in "$@"; do
        status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
        case "$status" in
            *"install ok installed"*) ;;
            *) printf ' %s' "$p" ;;
        esac
    done
}
# shellcheck disable=SC2086
missing=$(not_installed $packages)
# shellcheck disable=SC2086
missing_optional=$(not_installed $optional)

if [ -z "$missing" ] && [ -z "$missing_optional" ]; then
    echo "install-deps: all packages present"
    install_python_package
    exit 0
fi

echo "install-deps: installing:$missing$missing_optional"
if [ "$(id -u)" -eq 0 ]; then
    sudo=""
elif command -v sudo >/dev/null 2>&1; then
    sudo="sudo"
elif [ -z "$missing" ]; then
    echo "install-deps: not root and no sudo; not installing the optional:$missing_optional"
    install_python_package
    exit 0
else
    echo "install-deps: not root and no sudo; ask an administrator to install:$missing" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
# A fresh machine has no package lists yet; refresh them once, then install.
$sudo apt-get update -q
if [ -n "$missing" ]; then
    # shellcheck disable=SC2086
    $sudo apt-get install -y -q --no-install-recommends $missing
fi
if [ -n "$missing_optional" ]; then
    # shellcheck disable=SC2086
    $sudo apt-get install -y -q --no-install-recommends $missing_optional ||
        echo "install-deps: could not install$missing_optional; the tests that need them are skipped"
fi
install_python_package
