#!/usr/bin/env bash
# The kit's comparison step on a real accelerator (issue 26 part 3): run from the repo root on a GPU machine
# (`bash scripts/kit_device_check.sh`).
# Builds a kit for a copy of examples/cuda_trainer with a CPU reference recorded from the original on CPU, then runs
# `run_kit.py --accelerator cuda` against the original CUDA project and prints the report. Under 4 minutes.
# Two commands: the tiny GPT of model.py trained 8 AdamW steps in fp32, and in bf16 autocast (the bf16 defaults of
# ascend_port/verify/kit.py TOLERANCES put to the test on a real accelerator's bf16 matmuls).
set -uo pipefail
cd "$(dirname "$0")/.."
START=$SECONDS
python -c "import ascend_port.verify.kit" 2>/dev/null || pip install -q -e . 2>&1 | tail -3
python -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.is_available())"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true

WORK=$(mktemp -d)
cp -r examples/cuda_trainer "$WORK/cuda_trainer"
PROJECT=$WORK/cuda_trainer
# model.py's GPT trained as train.py does (AdamW, its betas and weight decay, gradient clipping), without the parts
# that need numpy/yaml/torchrun; on CUDA when there is one, on CPU for the reference (CUDA_VISIBLE_DEVICES="").
cat > "$PROJECT/kit_smoke.py" <<'EOF'
import sys
import torch
from model import GPT, GPTConfig

dtype = {"fp32": None, "bf16": torch.bfloat16}[sys.argv[sys.argv.index("--dtype") + 1]]
device = "cuda" if torch.cuda.is_available() else "cpu"
cfg = GPTConfig(vocab_size=256, dim=64, n_layers=2, n_heads=4, max_seq_len=64)
torch.manual_seed(0)
model = GPT(cfg).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.95), weight_decay=0.1)
tokens = torch.randint(cfg.vocab_size, (4, 33), generator=torch.Generator().manual_seed(1))
x, y = tokens[:, :-1].contiguous().to(device), tokens[:, 1:].contiguous().to(device)
for step in range(8):
    with torch.autocast(device, dtype=dtype or torch.float32, enabled=dtype is not None):
        _, loss = model(x, y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
print("device", x.device, "last loss", loss.item())
EOF

PROBE=ascend_port/verify/probe
echo "probe: $PROBE"

timeout 150 python - "$PROJECT" "$PROBE" "$WORK" <<'EOF'
import json, os, subprocess, sys, tempfile
from pathlib import Path
from ascend_port.verify.kit import TOLERANCES, write_kit

project, probe, work = Path(sys.argv[1]), Path(sys.argv[2]).resolve(), Path(sys.argv[3])
commands = [{"name": f"smoke-{d}", "argv": ["python", "kit_smoke.py", "--dtype", d]} for d in ("fp32", "bf16")]
runs = []
for command in commands:
    out = Path(tempfile.mkdtemp(dir=work))
    env = {**os.environ, "PYTHONPATH": str(probe), "ASCEND_PORT_PROBE_OUT": str(out), "ASCEND_PORT_PROBE_SEED": "0",
           "CUDA_VISIBLE_DEVICES": ""}
    subprocess.run([sys.executable, *command["argv"][1:]], cwd=project, env=env, check=True, timeout=60)
    losses = [l for p in out.glob("probe-*.json") for l in json.loads(p.read_text())["losses"]]
    rtol, atol = TOLERANCES[command["argv"][-1]]
    runs.append({**command, "losses": losses, "rtol": rtol, "atol": atol})
    print("CPU reference", command["name"], losses)
write_kit(work / "kit", project, commands, {"seed": 0, "runs": runs}, "2.5.1", probe=probe)
EOF
echo "--- run_kit.py --accelerator cuda ($((SECONDS - START)) s so far)"
timeout 150 python "$WORK/kit/run_kit.py" --accelerator cuda --project "$PROJECT" --timeout 120
echo "run_kit exit code: $? ($((SECONDS - START)) s in all)"
# the per-run JSON for the exact differences
python -c "
import json, glob
r = json.load(open(sorted(glob.glob('$WORK/kit/reports/kit-report-*.json'))[-1]))
for name, c in r['comparisons'].items():
    print(name, 'passed' if c['passed'] else 'FAILED', 'max_abs', c['max_abs'], 'max_rel', c['max_rel'])
for run in r['runs']:
    print(run['name'], 'exit', run['exit_code'], run['timings'])
"
