import torch
import torch_npu
from torch.distributed.device_mesh import DeviceMesh, init_device_mesh


def meshes(group, device_type):
    mesh = init_device_mesh("npu", (2, 4), mesh_dim_names=("dp", "tp"))
    flat = DeviceMesh("npu", torch.arange(8))
    keyword = init_device_mesh(device_type="npu", mesh_shape=(8,))
    grouped = DeviceMesh.from_group(group, "npu")
    same = init_device_mesh(device_type, (8,))
    cpu = init_device_mesh("cpu", (8,))
    return mesh, flat, keyword, grouped, same, cpu
