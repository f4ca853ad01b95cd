#!/usr/bin/env bash
# The GPU proof of the Triton rewrites: run on a machine with a CUDA GPU, torch and Triton.
# (The test needs neither this project nor libcst, so a machine without a package registry still runs it.)
set -uo pipefail
cd "$(dirname "$0")/../.."
pip install -q -e . || echo "(could not install ascend-port; tests/gpu does not need it)"
python -m pytest tests/gpu -q -p no:cacheprovider "$@"
