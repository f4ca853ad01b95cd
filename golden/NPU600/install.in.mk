install:
	pip install -e . flash-attn
	pip install flash-attn --no-build-isolation

gpu: install
	python train.py --device cuda
