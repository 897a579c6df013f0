import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Residual tanh gate with a per-feature affine: x + tanh(x * a + b).
    """

    def __init__(self, dim: int):
        super().__init__()
        self.a = nn.Parameter(torch.randn(dim))
        self.b = nn.Parameter(torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + torch.tanh(x * self.a + self.b)


batch_size = 64
dim = 96


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return [dim]
