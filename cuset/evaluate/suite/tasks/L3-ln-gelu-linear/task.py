import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """
    LayerNorm, GELU, then a Linear projection (a transformer head's norm + activation chain).
    """

    def __init__(self, dim: int, out_features: int):
        super().__init__()
        self.ln = nn.LayerNorm(dim)
        self.proj = nn.Linear(dim, out_features)
        with torch.no_grad():
            self.ln.weight.uniform_(0.5, 1.5)
            self.ln.bias.uniform_(-0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(F.gelu(self.ln(x)))


batch_size = 30
dim = 48
out_features = 32


def get_inputs():
    x = torch.randn(batch_size, dim) * 2
    return [x]


def get_init_inputs():
    return [dim, out_features]
