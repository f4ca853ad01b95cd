#!/bin/bash
# The project's own --xformers and --fp8: a single script does not show what its program does without them
# (the project step reads that in its Python code: tests/test_launch_flags.py), so they stay.
torchrun --nproc_per_node 8 train.py --dist-backend hccl \
    --xformers \
    --fp8
