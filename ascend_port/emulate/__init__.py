"""``ascend-port emulate``: run a Python command with an ``npu`` device backed by host memory and a stand-in
``torch_npu`` (stub/torch_npu). The modules the CLI imports (this one, runner) never import torch: torch is imported
only inside the emulated process (device.py, the stub)."""
