FROM ascendai/cann:8.5.0-910b-ubuntu22.04-py3.11
CMD ["python", "train.py", "--device", "cpu"]
CMD ["python", "-c", "print(\"--device cuda\")"]
CMD ["python", "train.py", \
     "--device", "cuda"]
CMD ["python", "train.py", "--device", "cuda"
ENTRYPOINT ["echo", "--device cuda"]
