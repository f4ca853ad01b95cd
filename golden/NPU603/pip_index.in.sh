#!/bin/bash
pip install torch==2.1.0+cu121 torchvision==0.16.0+cu121 --index-url https://download.pytorch.org/whl/cu121
pip3 install torch --extra-index-url=https://download.pytorch.org/whl/nightly/cu124
pip install torch==2.1.0 -f https://download.pytorch.org/whl/cu118/torch_stable.html
# CPU index and builds: unchanged
pip install torch==2.5.1+cpu --index-url https://download.pytorch.org/whl/cpu
