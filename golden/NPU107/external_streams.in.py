# A torch stream made around a handle of another library wraps a CUDA stream (NVSHMEM's and cuda.core's streams
# are CUDA streams): it stays torch.cuda's, with a TODO naming the library; torch's own streams are ported.
import nvshmem.core as nvshmem
import torch
from cuda.core.experimental import Device

dev = Device(0)
dev.set_current()
stream = dev.create_stream()
torch_stream = torch.cuda.ExternalStream(stream.handle)


def from_pointer(handle):
    return torch.cuda.Stream(stream_ptr=handle)


def side_stream():
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    return side


def same_stream(s):
    # torch's own stream rebuilt from its ids: not a foreign handle
    return torch.cuda.Stream(stream_id=s.stream_id, device_index=s.device_index, device_type=s.device_type)


nvshmem.barrier_all(stream=stream)


def imported_name(handle):
    from torch.cuda import ExternalStream

    return ExternalStream(handle)
