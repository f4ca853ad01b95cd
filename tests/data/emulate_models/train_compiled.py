import json

import torch
import torch.nn.functional as F
from train_resnet import ResNet


def main():
    torch.manual_seed(0)
    model = ResNet().cuda()
    compiled = torch.compile(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    generator = torch.Generator().manual_seed(1)
    images = torch.randn(8, 3, 16, 16, generator=generator).cuda()
    labels = torch.randint(0, 10, (8,), generator=generator).cuda()

    @torch.compile(backend="cudagraphs")
    def evaluate(x, y):
        return F.cross_entropy(model(x), y)

    losses = []
    for _ in range(3):
        loss = F.cross_entropy(compiled(images), labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        losses.append(evaluate(images, labels).item())
    print(json.dumps({"losses": losses, "device": str(next(model.parameters()).device)}))


if __name__ == "__main__":
    main()
