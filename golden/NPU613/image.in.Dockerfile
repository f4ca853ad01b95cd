FROM python:3.11-slim
RUN pip install --no-cache-dir torch && \
    # show the devices at build time
    nvidia-smi
CMD ["nvidia-smi"]
