"""Module docstring stays first."""
from __future__ import annotations

import os
import torch
import torch.nn as nn

x = torch.ones(2).cuda()
