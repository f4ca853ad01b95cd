def train(model, loader, optimizer, args, logger):
    total = 0.0
    for step, batch in enumerate(loader):
        loss = model(batch)
        loss.backward()
        optimizer.step()
        total += loss.detach()
        if step % args.log_interval == 0:
            print(f"step {step}: loss {loss.item():.4f}, mean {(total / (step + 1)).item():.4f}")
        if should_log:
            logger.info("loss %f", loss.cpu())

        def report():
            return loss.item()  # defined here, not run per step


def train_with_eval(model, loader, dev_loader, optimizer, args):
    for step, batch in enumerate(loader):
        model(batch).backward()
        optimizer.step()
        if step % args.eval_every == 0:
            for dev_batch in dev_loader:
                correct = (model(dev_batch).argmax(-1) == dev_batch.label).sum().item()
