FROM python:3.11-slim
RUN pip install --no-cache-dir torch && \
    # show the devices at build time
    npu-smi info
CMD ["npu-smi", "info"]
