import json
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def timestep_embedding(t, dim):
    half = dim // 2
    freqs = torch.exp(-math.log(10000) * torch.arange(half, device=t.device) / half)
    args = t[:, None].float() * freqs[None]
    return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)


class ResBlock(nn.Module):
    def __init__(self, cin, cout, tdim):
        super().__init__()
        self.norm1, self.conv1 = nn.GroupNorm(4, cin), nn.Conv2d(cin, cout, 3, padding=1)
        self.emb = nn.Linear(tdim, 2 * cout)  # adaLN-style scale and shift
        self.norm2, self.conv2 = nn.GroupNorm(4, cout), nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x, emb):
        h = self.conv1(F.silu(self.norm1(x)))
        scale, shift = self.emb(F.silu(emb))[:, :, None, None].chunk(2, dim=1)
        h = self.norm2(h) * (1 + scale) + shift
        return self.conv2(F.silu(h)) + self.skip(x)


class Attention(nn.Module):
    def __init__(self, channels, heads=2):
        super().__init__()
        self.heads, self.norm = heads, nn.GroupNorm(4, channels)
        self.qkv, self.out = nn.Conv2d(channels, 3 * channels, 1), nn.Conv2d(channels, channels, 1)

    def forward(self, x):
        b, c, h, w = x.shape
        q, k, v = self.qkv(self.norm(x)).reshape(b, 3, self.heads, c // self.heads, h * w).transpose(-1, -2).unbind(1)
        y = F.scaled_dot_product_attention(q, k, v)
        return x + self.out(y.transpose(-1, -2).reshape(b, c, h, w))


class TinyUNet(nn.Module):
    def __init__(self, ch=8, tdim=16):
        super().__init__()
        self.tdim = tdim
        self.time = nn.Sequential(nn.Linear(tdim, tdim), nn.SiLU(), nn.Linear(tdim, tdim))
        self.inp = nn.Conv2d(3, ch, 3, padding=1)
        self.down1, self.pool = ResBlock(ch, ch, tdim), nn.Conv2d(ch, 2 * ch, 3, stride=2, padding=1)
        self.mid, self.attn = ResBlock(2 * ch, 2 * ch, tdim), Attention(2 * ch)
        self.up_t = nn.ConvTranspose2d(2 * ch, ch, 2, stride=2)
        self.up1 = ResBlock(2 * ch, ch, tdim)
        self.out = nn.Sequential(nn.GroupNorm(4, ch), nn.SiLU(), nn.Conv2d(ch, 3, 3, padding=1))

    def forward(self, x, t):
        emb = self.time(timestep_embedding(t, self.tdim))
        h1 = self.down1(self.inp(x), emb)
        h = self.attn(self.mid(self.pool(h1), emb))
        up = self.up_t(h) + F.interpolate(h, scale_factor=2, mode="nearest").mean(1, keepdim=True)
        up = F.interpolate(up, size=h1.shape[-2:], mode="bilinear", align_corners=False)
        return self.out(self.up1(torch.cat([up, h1], dim=1), emb))


def main():
    device = torch.device("cuda")
    torch.manual_seed(0)
    torch.cuda.manual_seed_all(0)
    model = TinyUNet().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    images = torch.randn(4, 3, 8, 8, generator=torch.Generator().manual_seed(1)).to(device)
    losses = []
    for _ in range(4):
        noise = torch.randn_like(images)
        t = torch.randint(0, 1000, (images.shape[0],), device=device)
        alpha = (1 - t.float() / 1000)[:, None, None, None]
        noisy = alpha.sqrt() * images + (1 - alpha).sqrt() * noise
        loss = F.mse_loss(model(noisy, t), noise)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        losses.append(loss.item())
    print(json.dumps({"losses": losses, "device": str(next(model.parameters()).device)}))


if __name__ == "__main__":
    main()
