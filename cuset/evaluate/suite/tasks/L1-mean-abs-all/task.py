import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Mean absolute value of the whole tensor (a scalar).
    """

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.mean(torch.abs(x))


batch_size = 64
dim = 500


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
