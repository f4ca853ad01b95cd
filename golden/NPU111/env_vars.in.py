"""Set CUDA_VISIBLE_DEVICES before launching (docstrings stay)."""
import os
import subprocess

os.environ["CUDA_VISIBLE_DEVICES"] = "0,1"
blocking = os.getenv("CUDA_LAUNCH_BLOCKING", "0")
os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
if "PYTORCH_NO_CUDA_MEMORY_CACHING" in os.environ:
    pass
subprocess.run(["python", "train.py"], env={**os.environ, "CUDA_VISIBLE_DEVICES": "2"})
