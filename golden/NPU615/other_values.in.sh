python train.py --device cpu
docker run --device /dev/nvidia0 image
python serve.py --device-map auto --cuda-graphs
python train.py --device "$DEVICE"
