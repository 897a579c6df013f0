import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Reverse the order of the last dimension.
    """

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.flip(x, dims=[-1])


batch_size = 30
dim = 130


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
