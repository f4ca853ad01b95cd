FROM ascendai/cann:8.5.0-910b-ubuntu22.04-py3.11
CMD ["python", "train.py", "--device", "cuda", "--dist-backend=nccl"]
ENTRYPOINT ["/bin/bash", "-c", "torchrun --nproc_per_node 8 train.py --backend nccl --device cuda:0"]
CMD [ "python3", "eval.py", "--device=cuda:1" ]
