#!/usr/bin/env bash
# Runtime-proof venv: .venv-runtime with a CPU torch, lightning and a pure-Python deepspeed, used by
# tests/runtime (marker `runtime`) to run training scripts before and after `fabric-lsp check --fix`.
# Idempotent: exits at once when the venv is there, matches tests/runtime/requirements.txt and
# deepspeed's CPU comm op is already built.
set -euo pipefail
cd "$(dirname "$0")/../.."

VENV=.venv-runtime
REQ=tests/runtime/requirements.txt          # torch, lightning, deepspeed (checked below)
LOCK=tests/runtime/constraints.txt         # their dependencies, as proven
export DS_ACCELERATOR=cpu
# deepspeed JIT-builds its CPU shared-memory comm op (~1 min) on first use; keep the build inside
# the venv so every later run (the tests set the same variable) just loads it.
export TORCH_EXTENSIONS_DIR="$PWD/$VENV/torch_extensions"

# Verify: pinned versions, a CPU-only torch, the public Fabric/strategy imports, the built op.
check() {
  [ -x "$VENV/bin/python" ] || return 1
  "$VENV/bin/python" - "$REQ" <<'PY' 2>/dev/null
import os, sys
from importlib.metadata import version
pins = {}
for line in open(sys.argv[1]):
    line = line.split("#")[0].strip()
    if line:
        name, _, ver = line.partition("==")
        pins[name.strip()] = ver.strip()
for name, want in pins.items():
    have = version(name).split("+")[0]
    if have != want:
        sys.exit(f"{name} {have} != {want}")
import torch
if torch.version.cuda is not None:
    sys.exit(f"torch {torch.__version__} is a CUDA build")
from lightning.fabric import Fabric  # noqa: F401
from lightning.fabric.strategies import DDPStrategy, DeepSpeedStrategy  # noqa: F401
import deepspeed  # noqa: F401
root = os.environ["TORCH_EXTENSIONS_DIR"]
if not any(f == "deepspeed_shm_comm.so" for _, _, fs in os.walk(root) for f in fs):
    sys.exit("deepspeed_shm_comm op not built")
PY
}

if check; then
  echo "30-runtime: $VENV is up to date"
  exit 0
fi

# One installer at a time (two pytest sessions may both find the venv missing); re-check after
# waiting, the other one may have finished the job.
if command -v flock >/dev/null; then
  exec 9>"${TMPDIR:-/tmp}/fabric-lsp-30-runtime.$(id -u).lock"
  flock 9
  if check; then
    echo "30-runtime: $VENV is up to date"
    exit 0
  fi
fi

t0=$(date +%s)
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"

# 1. torch alone first, and only the CPU wheel that lies on disk (pip's find-links): asking for the
#    `+cpu` local version means pip can never fetch a CUDA build instead (PyPI has no `+cpu`).
TORCH_PIN=$(grep -E '^torch==' "$REQ")
"$VENV/bin/pip" install -q -c "$LOCK" "${TORCH_PIN}+cpu"

# 2. lightning + deepspeed (no compiled ops: DS_BUILD_OPS=0), torch held to the pin.
DS_BUILD_OPS=0 "$VENV/bin/pip" install -q -c "$REQ" -c "$LOCK" -r "$REQ"

# 3. Build deepspeed's CPU shared-memory comm op once (deepspeed would do it at the first
#    init_distributed of every test otherwise).
"$VENV/bin/python" - <<'PY'
from deepspeed.accelerator import get_accelerator
builder = get_accelerator().create_op_builder("ShareMemCommBuilder")
if builder is not None:
    builder.load(verbose=False)
PY

if ! check; then
  echo "30-runtime: $VENV failed its check after install:" >&2
  "$VENV/bin/python" -c 'import torch, lightning, deepspeed; print(torch.__version__, lightning.__version__, deepspeed.__version__)' >&2 || true
  exit 1
fi
echo "30-runtime: installed $VENV in $(( $(date +%s) - t0 ))s"
