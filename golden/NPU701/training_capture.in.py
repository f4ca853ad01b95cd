import torch


def train_step_graph(model, optimizer, static_x, static_y):
    g = torch.cuda.CUDAGraph()
    optimizer.zero_grad(set_to_none=True)
    with torch.cuda.graph(g):
        loss = torch.nn.functional.mse_loss(model(static_x), static_y)
        loss.backward()
        optimizer.step()
    return g


# Must get no TODO: inference capture.
def inference_graph(model, static_x):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        static_out = model(static_x)
    return g, static_out
