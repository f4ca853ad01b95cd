import torch
import torch_npu
import pytorch_lightning as pl


class LitModel(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.cross_entropy(self(x.npu()), y.npu())
        self.history.append(loss.item())  # reported: once a step
        print(loss)  # reported: the loss the step returns
        if batch_idx % 50 == 0:
            print(loss.item())  # kept: once in 50 steps
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.cross_entropy(self(x), y).item()  # kept: evaluation


def train_step(model, batch, optimizer):
    loss = model(batch)
    loss.backward()
    optimizer.step()
    return float(loss)  # reported: the loss backward was called on
