import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Transpose, scale, and add a bias broadcast along the rows of the transposed matrix.
    """

    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        return x.t() * self.scale + bias


rows = 48
cols = 80


def get_inputs():
    x = torch.randn(rows, cols)
    bias = torch.randn(rows)
    return [x, bias]


def get_init_inputs():
    return [0.5]
