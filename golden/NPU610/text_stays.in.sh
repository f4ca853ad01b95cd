#!/bin/sh
# Set CUDA_VISIBLE_DEVICES=0 and run nvidia-smi first (comments are text).
echo "set CUDA_VISIBLE_DEVICES before launching --device cuda"
echo 'export CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES'
cat > env.sh <<EOF2
export CUDA_VISIBLE_DEVICES=0
nvidia-smi
EOF2
python - <<'PY'
import os
print(os.environ.get("CUDA_VISIBLE_DEVICES"))
PY
MY_CUDA_VISIBLE_DEVICES_BACKUP=1
echo $CUDA_VISIBLE_DEVICES_SAVED
