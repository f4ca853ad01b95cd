python train.py --device npu
python train.py --device=npu:0 --device-type "npu"
python eval.py --device_type='npu' --device "npu:${LOCAL_RANK}"
