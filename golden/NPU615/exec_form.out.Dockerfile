FROM ascendai/cann:8.5.0-910b-ubuntu22.04-py3.11
CMD ["python", "train.py", "--device", "npu", "--dist-backend=hccl"]
ENTRYPOINT ["/bin/bash", "-c", "torchrun --nproc_per_node 8 train.py --backend hccl --device npu:0"]
CMD [ "python3", "eval.py", "--device=npu:1" ]
