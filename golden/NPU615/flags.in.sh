python train.py --device cuda
python train.py --device=cuda:0 --device-type "cuda"
python eval.py --device_type='cuda' --device "cuda:${LOCAL_RANK}"
