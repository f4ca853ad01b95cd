import flashinfer
from cuda import cudart
from liger_kernel.transformers import apply_liger_kernel_to_llama
from lmdeploy import pipeline, TurbomindEngineConfig
from thunder.executors.nvfuserex import nvfuserex
from xfuser.core.long_ctx_attention import xFuserLongContextAttention
from yunchang import LongContextAttention
from polygraphy.backend.trt import engine_from_network
