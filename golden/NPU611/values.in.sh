#!/bin/bash
# Converted: literal values HCCL accepts.
export NCCL_BUFFSIZE=8388608 NCCL_ALGO=Ring
NCCL_IB_TIMEOUT="18" NCCL_IB_SL=3 torchrun train.py
# Kept with a TODO: out of range, no counterpart, or computed.
export NCCL_IB_TIMEOUT=23
export NCCL_ALGO=Tree,Ring
export NCCL_BUFFSIZE=$((4 * 1024 * 1024))
echo "buffer: $NCCL_BUFFSIZE"
# Lower-case names are shell variables of the script, not NCCL's.
nccl_buffsize=8388608
