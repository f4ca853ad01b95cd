import torch
from torch.distributed.device_mesh import DeviceMesh, init_device_mesh


def meshes(group, device_type):
    mesh = init_device_mesh("cuda", (2, 4), mesh_dim_names=("dp", "tp"))
    flat = DeviceMesh("cuda", torch.arange(8))
    keyword = init_device_mesh(device_type="cuda", mesh_shape=(8,))
    grouped = DeviceMesh.from_group(group, "cuda")
    same = init_device_mesh(device_type, (8,))
    cpu = init_device_mesh("cpu", (8,))
    return mesh, flat, keyword, grouped, same, cpu
