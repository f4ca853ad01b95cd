#!/bin/bash
# Steps that install only CUDA-only code: a TODO each, the command kept (the if-block would be empty otherwise).
if [ "$USE_FLASH" = 1 ]; then
    pip install flash-attn --no-build-isolation
fi
pip install -U xformers
MAX_JOBS=4 pip install git+https://github.com/Dao-AILab/flash-attention.git@v2.6.3
git clone --depth 1 https://github.com/facebookresearch/xformers.git
