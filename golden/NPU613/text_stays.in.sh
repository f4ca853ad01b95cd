# nvidia-smi shows the GPUs
echo "run nvidia-smi to see them"
echo 'nvidia-smi'
npu-smi info
