# syntax=docker/dockerfile:1
FROM python:3.11-slim
RUN <<EOF
ENV CUDA_VISIBLE_DEVICES=1
nvidia-smi
EOF
COPY <<-'CONF' /etc/train.env
	CUDA_VISIBLE_DEVICES=0
	CONF
ENV ASCEND_RT_VISIBLE_DEVICES=0
