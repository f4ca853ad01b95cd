import torch


@torch.no_grad()
def evaluate(model, loader):
    correct = 0
    for inputs, labels in loader:
        preds = model(inputs).argmax(-1)
        correct += (preds == labels).sum().item()
        print(preds.cpu().tolist())
    return correct


def rollout(env, policy, scheduler):
    for _ in range(100):
        action = policy(obs).item()
        obs = env.step(action)
        scheduler.step()
