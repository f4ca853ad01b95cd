# A torch stream made around a handle of another library wraps a CUDA stream (NVSHMEM's and cuda.core's streams
# are CUDA streams): it stays torch.cuda's, with a TODO naming the library; torch's own streams are ported.
# TODO(ascend-port): NPU504 [low] NVSHMEM (nvshmem4py) is CUDA-only: on Ascend use SHMEM (Ascend's symmetric-memory library, on ACL streams) or torch.distributed's HCCL collectives, and torch.npu streams for its cuda.core streams
import nvshmem.core as nvshmem
import torch
import torch_npu
# TODO(ascend-port): NPU504 [low] cuda-python (cudart/cuda.bindings) calls the CUDA runtime: use torch.npu streams, events and memory APIs, or CANN's pyACL (import acl) for runtime calls
from cuda.core.experimental import Device

dev = Device(0)
dev.set_current()
stream = dev.create_stream()
# TODO(ascend-port): NPU107 [low] torch.cuda.ExternalStream wraps a CUDA stream handle (NVSHMEM, cuda.core: CUDA-only): it stays on torch.cuda, and the code that uses the stream must be ported with it; on Ascend make the stream with torch.npu.Stream(), or wrap an ACL stream (acl.rt.create_stream) in torch.npu.ExternalStream; NVSHMEM's Ascend counterpart is SHMEM, on ACL streams
torch_stream = torch.cuda.ExternalStream(stream.handle)


def from_pointer(handle):
    # TODO(ascend-port): NPU107 [low] torch.cuda.Stream wraps a CUDA stream handle (NVSHMEM, cuda.core: CUDA-only): it stays on torch.cuda, and the code that uses the stream must be ported with it; on Ascend make the stream with torch.npu.Stream(), or wrap an ACL stream (acl.rt.create_stream) in torch.npu.ExternalStream; NVSHMEM's Ascend counterpart is SHMEM, on ACL streams
    return torch.cuda.Stream(stream_ptr=handle)


def side_stream():
    side = torch.npu.Stream()
    side.wait_stream(torch.npu.current_stream())
    return side


def same_stream(s):
    # torch's own stream rebuilt from its ids: not a foreign handle
    return torch.npu.Stream(stream_id=s.stream_id, device_index=s.device_index, device_type=s.device_type)


nvshmem.barrier_all(stream=stream)


def imported_name(handle):
    from torch.npu import ExternalStream

    # TODO(ascend-port): NPU107 [low] torch.cuda.ExternalStream wraps a CUDA stream handle (NVSHMEM, cuda.core: CUDA-only): import ExternalStream from torch.cuda again (the port renamed that import), and the code that uses the stream must be ported with it; on Ascend make the stream with torch.npu.Stream(), or wrap an ACL stream (acl.rt.create_stream) in torch.npu.ExternalStream; NVSHMEM's Ascend counterpart is SHMEM, on ACL streams
    return ExternalStream(handle)
