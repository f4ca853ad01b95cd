#!/bin/bash
# Nothing here installs a CUDA-only package: unchanged.
pip install -r requirements.txt
pip install apex  # the PyPI "apex" is another project; only NVIDIA's CUDA build is reported
pip install "flash-attn==${FA_VERSION}"  # not known statically
pip uninstall -y flash-attn
pip download flash-attn -d wheels
echo "pip install flash-attn"
pip install -e ".[dev]" torch-npu==2.5.1
git clone https://github.com/huggingface/transformers
