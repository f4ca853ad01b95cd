FROM ascendai/cann:8.5.0-910b-ubuntu22.04-py3.11
RUN pip install --no-cache-dir torch==2.1.0+cu118 torchvision \
        --index-url https://download.pytorch.org/whl/cu118
RUN pip install torch==2.5.1 --index-url https://download.pytorch.org/whl/cpu
