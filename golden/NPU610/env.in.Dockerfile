FROM ascendai/cann:8.5.0-910b-ubuntu22.04-py3.11
ENV CUDA_VISIBLE_DEVICES=0 \
    PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
ENV CUDA_LAUNCH_BLOCKING 1
# CUDA_VISIBLE_DEVICES is set above
RUN echo "$CUDA_VISIBLE_DEVICES" > /etc/visible
