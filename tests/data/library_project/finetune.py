"""Fine-tune a transformers Llama with accelerate: flash-attention-2, TF32 matmuls, optional Liger kernels.

accelerate launch finetune.py --steps 1000
"""

from __future__ import annotations

import argparse
import json

import torch
from accelerate import Accelerator
from liger_kernel.transformers import apply_liger_kernel_to_llama
from train import make_batches
from transformers import AutoModelForCausalLM, LlamaConfig, TrainingArguments


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--liger", action="store_true", help="patch Llama with Liger's Triton kernels")
    cli = parser.parse_args(argv)
    if cli.liger:
        apply_liger_kernel_to_llama()

    args = TrainingArguments(
        output_dir="out", learning_rate=2e-3, per_device_train_batch_size=4, seed=0, tf32=True, report_to=[]
    )
    accelerator = Accelerator(mixed_precision="bf16")
    config = LlamaConfig(
        vocab_size=128,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
    )
    torch.manual_seed(args.seed)
    model = AutoModelForCausalLM.from_config(config, attn_implementation="flash_attention_2", dtype=torch.float32)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)
    model, optimizer = accelerator.prepare(model, optimizer)

    model.train()
    losses = []
    for input_ids, attention_mask in make_batches(config, cli.steps, args.per_device_train_batch_size, 32):
        input_ids, attention_mask = input_ids.to(accelerator.device), attention_mask.to(accelerator.device)
        labels = input_ids.masked_fill(attention_mask == 0, -100)
        loss = model(input_ids=input_ids, attention_mask=attention_mask, labels=labels).loss
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        losses.append(loss.item())
    accelerator.print(json.dumps({"losses": losses, "device": str(accelerator.device)}))


if __name__ == "__main__":
    main()
