FROM ascendai/cann:8.5.0-910b-ubuntu22.04-py3.11
# nvidia/cuda images are not used here
RUN pip install torch==2.5.1 torch-npu==2.5.1.post1
