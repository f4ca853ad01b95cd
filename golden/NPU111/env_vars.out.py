"""Set CUDA_VISIBLE_DEVICES before launching (docstrings stay)."""
import os
import subprocess

os.environ["ASCEND_RT_VISIBLE_DEVICES"] = "0,1"
blocking = os.getenv("ASCEND_LAUNCH_BLOCKING", "0")
os.environ.setdefault("PYTORCH_NPU_ALLOC_CONF", "expandable_segments:True")
if "PYTORCH_NO_NPU_MEMORY_CACHING" in os.environ:
    pass
subprocess.run(["python", "train.py"], env={**os.environ, "ASCEND_RT_VISIBLE_DEVICES": "2"})
