#!/bin/bash
export ASCEND_RT_VISIBLE_DEVICES=0
python train.py
