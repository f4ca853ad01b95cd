import torch
import torch_npu
from torch.utils.data import DataLoader


class Trainer:
    def __init__(self, dataset, device):
        self.device = device
        self.train_loader = DataLoader(dataset, batch_size=32, shuffle=True, pin_memory=True, num_workers=4)

    def fit(self, model, optimizer):
        for epoch in range(3):
            for inputs, labels in self.train_loader:
                inputs = inputs.to(self.device)
                labels = labels.npu()
                mask = inputs.to(torch.float16)
                loss = model(inputs, labels, mask)
                loss.backward()
                optimizer.step()

    def evaluate(self, model):
        for batch in tqdm(self.train_loader):
            batch = {k: v.to(self.device) for k, v in batch.items()}
            model(**batch)
