import torch
import torch_npu


def train_step_graph(model, optimizer, static_x, static_y):
    g = torch.npu.NPUGraph()
    optimizer.zero_grad(set_to_none=True)
    # TODO(ascend-port): NPU701 [medium] this graph captures a training step (backward or optimizer step): torch_npu's NPU graphs support inference only; capture the forward pass for inference, or run the training step eagerly
    with torch.npu.graph(g):
        loss = torch.nn.functional.mse_loss(model(static_x), static_y)
        loss.backward()
        optimizer.step()
    return g


# Must get no TODO: inference capture.
def inference_graph(model, static_x):
    g = torch.npu.NPUGraph()
    with torch.npu.graph(g):
        static_out = model(static_x)
    return g, static_out
