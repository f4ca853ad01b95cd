import json

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.backends.cudnn.benchmark = True


class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.skip = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(y)) + self.skip(x))


class ResNet(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 1, 1, bias=False), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2))
        self.layers = nn.Sequential(Block(8, 16, 2), Block(16, 16, 1))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(16, classes)

    def forward(self, x):
        return self.fc(self.pool(self.layers(self.stem(x))).flatten(1))


def main():
    torch.manual_seed(0)
    model = ResNet().cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scaler = torch.cuda.amp.GradScaler()
    generator = torch.Generator().manual_seed(1)
    images = torch.randn(8, 3, 16, 16, generator=generator)
    labels = torch.randint(0, 10, (8,), generator=generator)
    losses = []
    for _ in range(4):
        x, y = images.cuda(non_blocking=True), labels.to(device="cuda")
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        losses.append(F.cross_entropy(model(images.cuda()), labels.cuda()).item())
    print(json.dumps({"losses": losses, "device": str(next(model.parameters()).device)}))


if __name__ == "__main__":
    main()
