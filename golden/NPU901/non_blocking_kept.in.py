from torch.utils.data import DataLoader

pinned = DataLoader(dataset, batch_size=32, pin_memory=True)
plain = DataLoader(dataset, batch_size=32)
for inputs, labels in pinned:
    inputs = inputs.to(device, non_blocking=True)
    labels = labels.to(device=device, non_blocking=True)
for inputs, labels in plain:
    inputs = inputs.to(device)
