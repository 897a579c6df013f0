import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Product over the last dimension (e.g. a survival probability from per-step factors).
    """

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.prod(x, dim=-1)


batch_size = 100
dim = 16


def get_inputs():
    x = 1.0 + 0.1 * torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
