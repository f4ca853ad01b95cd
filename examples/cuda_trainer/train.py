"""Train the tiny GPT on CUDA GPUs.  Launch with scripts/train.sh (torchrun) or `python train.py`."""
from __future__ import annotations

import argparse
import logging
import os
import time
from dataclasses import dataclass, fields

os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")

import torch
import torch.distributed as dist
import yaml
from torch.nn.parallel import DistributedDataParallel as DDP

from data import build_dataloader
from model import GPT, GPTConfig

log = logging.getLogger("train")


@dataclass
class TrainConfig:
    cuda: bool = True  # set False to debug on CPU
    batch_size: int = 16
    seq_len: int = 512
    lr: float = 3e-4
    weight_decay: float = 0.1
    max_steps: int = 2000
    log_every: int = 10
    ckpt_path: str = "checkpoints/gpt.pt"


def parse_args():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--config", default="configs/train.yaml")
    p.add_argument("--device", default="cuda")
    p.add_argument("--backend", default="nccl", help="torch.distributed backend")
    p.add_argument("--amp-dtype", default="auto", choices=["auto", "bf16", "fp16", "fp32"])
    p.add_argument("--resume", action="store_true")
    return p.parse_args()


def load_config(path: str):
    with open(path) as f:
        raw = yaml.safe_load(f) or {}
    model_cfg = GPTConfig(**raw.get("model", {}))
    known = {f.name for f in fields(TrainConfig)}
    train_cfg = TrainConfig(**{k: v for k, v in raw.get("train", {}).items() if k in known})
    return model_cfg, train_cfg


def setup_distributed(args):
    if "LOCAL_RANK" not in os.environ:
        return False, 0, torch.device(args.device)
    if args.backend == "nccl":
        os.environ.setdefault("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1")
        dist.init_process_group(backend="nccl")
    else:
        dist.init_process_group(backend=args.backend)
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    return True, local_rank, device


def pick_amp_dtype(name: str) -> torch.dtype:
    if name == "auto":
        if torch.cuda.get_device_capability()[0] >= 8 and torch.cuda.is_bf16_supported():
            return torch.bfloat16
        return torch.float16
    return {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[name]


def save_checkpoint(path, model, optimizer, scaler, step):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    raw = model.module if isinstance(model, DDP) else model
    torch.save({"model": raw.state_dict(), "optimizer": optimizer.state_dict(),
                "scaler": scaler.state_dict(), "step": step}, path)


def main():
    args = parse_args()
    model_cfg, cfg = load_config(args.config)
    distributed, local_rank, device = setup_distributed(args)
    is_main = not distributed or dist.get_rank() == 0
    logging.basicConfig(level=logging.INFO if is_main else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(message)s")

    if not (cfg.cuda and torch.cuda.is_available()):
        raise SystemExit("this trainer needs a CUDA GPU (cfg.cuda is False or no GPU found)")
    log.info(f"using cuda: {torch.cuda.get_device_name(device)} x {torch.cuda.device_count()}")

    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    torch.backends.cudnn.benchmark = True
    amp_dtype = pick_amp_dtype(args.amp_dtype)
    log.info("amp dtype: %s", amp_dtype)

    model = GPT(model_cfg).to(device)
    log.info("params: %.1fM", model.num_params() / 1e6)
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr, betas=(0.9, 0.95),
                                  weight_decay=cfg.weight_decay, fused=True)
    scaler = torch.cuda.amp.GradScaler(enabled=(amp_dtype == torch.float16))

    start_step = 0
    if args.resume and os.path.exists(cfg.ckpt_path):
        ckpt = torch.load(cfg.ckpt_path, map_location=f"cuda:{local_rank}")
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        scaler.load_state_dict(ckpt["scaler"])
        start_step = ckpt["step"]
        log.info("resumed from %s at step %d", cfg.ckpt_path, start_step)
        del ckpt
        torch.cuda.empty_cache()

    if distributed:
        model = DDP(model, device_ids=[local_rank])

    loader = build_dataloader(model_cfg.vocab_size, cfg.seq_len, cfg.batch_size, distributed)
    model.train()
    step, epoch, t0 = start_step, 0, time.perf_counter()
    while step < cfg.max_steps:
        if distributed:
            loader.sampler.set_epoch(epoch)
        for x, y in loader:
            if step >= cfg.max_steps:
                break
            torch.cuda.nvtx.range_push(f"step {step}")
            x = x.cuda(non_blocking=True)
            y = y.to(device, non_blocking=True)

            with torch.cuda.amp.autocast(dtype=amp_dtype, enabled=amp_dtype != torch.float32):
                _, loss = model(x, y)
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
            torch.cuda.nvtx.range_pop()
            step += 1

            if step % cfg.log_every == 0:
                if x.is_cuda:
                    torch.cuda.synchronize()
                dt = (time.perf_counter() - t0) / cfg.log_every
                tok_s = cfg.batch_size * cfg.seq_len / dt
                mem_gb = torch.cuda.max_memory_allocated() / 1024**3
                log.info("step %d | loss %.4f | %.0f tok/s | max mem %.2f GB",
                         step, loss.item(), tok_s, mem_gb)
                if log.isEnabledFor(logging.DEBUG):
                    log.debug("gpu memory busy: %d%%", torch.cuda.memory_usage())
                t0 = time.perf_counter()
        epoch += 1

    if is_main:
        save_checkpoint(cfg.ckpt_path, model, optimizer, scaler, step)
        log.info("saved checkpoint to %s", cfg.ckpt_path)
    if distributed:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
