#!/usr/bin/env bash
# Create bench/.venv-peers (git-ignored) with the peer BT libraries used by bench/peers.py.
# Separate from the project venv because arena-rank 0.1.1 pins numpy==2.3.3 / jax==0.8.1.
# Usage: bash bench/setup_peers.sh            (re-running reuses the venv; pip skips satisfied pins)
#        PYTHON=python3.11 bash bench/setup_peers.sh
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="$HERE/.venv-peers"
PY="${PYTHON:-python3}"
if [ ! -x "$VENV/bin/python" ]; then
    "$PY" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install --quiet --upgrade pip
"$VENV/bin/python" -m pip install --quiet -r "$HERE/peers-requirements.txt"
"$VENV/bin/python" - <<'PY'
import multiprocessing as mp
mp.set_start_method("forkserver", force=True)  # arena-rank on Linux
import arena_rank, evalica, choix, jax, numpy
from arena_rank.models.bradley_terry import BradleyTerry  # noqa: F401
print("peers OK: evalica", evalica.__version__, "(rust ext: %s)" % evalica.PYO3_AVAILABLE,
      "| choix", __import__("importlib.metadata").metadata.version("choix"), "| jax", jax.__version__, "| numpy", numpy.__version__)
PY
echo "peer venv ready: $VENV/bin/python bench/peers.py --votes 1000000 --models 50 --json bench/out/peers_1m.json"
