#!/bin/bash
# Makes a Python path from which Debian's python3 imports Kernel Tuner,
# outside this repository: $KT_ENV (default /work/kt-env) gets a link to
# the kernel_tuner package of a fetched copy of its repository ($KT_SRC,
# default /work/kt), its dist-info (Kernel Tuner reads its own version from
# it), and python-constraint2's pure-Python modules from a fetched copy of
# its repository ($PC_GIT: a git directory, default the search tool's
# mirror). Debian 12 gives the rest: python3-numpy, python3-scipy,
# python3-pyopencl, python3-pandas, python3-jsonschema, python3-xmltodict
# and, for its bayes_opt strategy, python3-sklearn. PyPI is not used.
#
#   examples/kt-side-by-side/setup.sh && PYTHONPATH=/work/kt-env /usr/bin/python3 -c 'import kernel_tuner'
set -euo pipefail
KT_SRC=${KT_SRC:-/work/kt}
KT_ENV=${KT_ENV:-/work/kt-env}
PC_GIT=${PC_GIT:-/work/.mirror/python-constraint+python-constraint/repo}
[ -d "$KT_SRC/kernel_tuner" ] || { echo "setup.sh: no Kernel Tuner repository at KT_SRC=$KT_SRC" >&2; exit 1; }
[ -d "$PC_GIT" ] || { echo "setup.sh: no python-constraint git directory at PC_GIT=$PC_GIT" >&2; exit 1; }
version=$(sed -n 's/^version = "\([^"]*\)".*/\1/p' "$KT_SRC/pyproject.toml" | head -1)
rm -rf "$KT_ENV" && mkdir -p "$KT_ENV"
ln -s "$(cd "$KT_SRC" && pwd)/kernel_tuner" "$KT_ENV/kernel_tuner"
mkdir "$KT_ENV/kernel_tuner-$version.dist-info"
printf 'Metadata-Version: 2.1\nName: kernel_tuner\nVersion: %s\n' "$version" >"$KT_ENV/kernel_tuner-$version.dist-info/METADATA"
# The .py modules only: the package's C files need a build that Debian's Cython 0.29 cannot make.
git --git-dir="$PC_GIT" archive HEAD constraint | tar -x -C "$KT_ENV" --wildcards 'constraint/*.py'
printf '{"kernel_tuner_version": "%s", "python_constraint_commit": "%s"}\n' "$version" \
	"$(git --git-dir="$PC_GIT" rev-parse HEAD)" >"$KT_ENV/VERSIONS.json"
PYTHONPATH=$KT_ENV /usr/bin/python3 -c 'import kernel_tuner, constraint; print("kernel_tuner", kernel_tuner.__version__, kernel_tuner.__file__)'
