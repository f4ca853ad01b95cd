import torch


def train(model, loader, optimizer, scheduler, epochs):
    model.cuda()
    for epoch in range(epochs):
        running = 0.0
        for step, (inputs, labels) in enumerate(loader):
            loss = model(inputs.cuda(), labels.cuda())
            loss.backward()
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            running += loss.item()
            preds = model.logits.argmax(-1).cpu().numpy()
            print(loss)
            print(f"step {step} loss {loss}")
            torch.cuda.synchronize()
        # once an epoch: not in the step loop
        print(f"epoch {epoch}: {running / len(loader)} last {loss.item()}")


def train_accelerate(accelerator, model, loader, optimizer):
    step = 0
    while step < 1000:
        for batch in loader:
            loss = model(**batch).loss
            accelerator.backward(loss)
            optimizer.step()
            losses = accelerator.gather(loss).tolist()
            if float(loss) > 100:
                break
            step += 1
