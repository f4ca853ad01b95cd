import thunder
from lmdeploy import pipeline, PytorchEngineConfig

import cuda_helpers
from mypackage.cuda import kernels

pipe = pipeline("internlm/internlm2-chat-7b", backend_config=PytorchEngineConfig(device_type="ascend"))
