#!/bin/bash
export CUDA_VISIBLE_DEVICES=0
python train.py
