#!/bin/bash
set -e
# A CUDA-only package among others is cut out of the command; alone, the step gets a TODO.
pip install flash-attn --no-build-isolation
python -m pip install -U transformers flash-attn==2.5.8 xformers accelerate
if [ -n "$WITH_EXTRAS" ]; then
    pip install \
        einops \
        flash_attn \
        peft
fi
pip3 install "$EXTRA" pynvml
pip install git+https://github.com/Dao-AILab/flash-attention.git
git clone https://github.com/Dao-AILab/flash-attention.git && cd flash-attention && python setup.py install
