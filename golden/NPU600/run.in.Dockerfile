FROM ascendai/cann:8.5.0-910b-ubuntu22.04-py3.11
RUN pip install --no-cache-dir torch==2.5.1 && \
    pip install flash-attn --no-build-isolation
RUN pip install transformers flash-attn==2.5.8 \
    accelerate
RUN ["pip", "install", "einops", "xformers"]
RUN git clone https://github.com/NVIDIA/apex && cd apex && \
    pip install -v --no-build-isolation --global-option="--cuda_ext" ./
