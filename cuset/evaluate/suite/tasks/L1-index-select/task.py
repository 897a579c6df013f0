import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Select rows of x by index (torch.index_select along dim 0).
    """

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        return torch.index_select(x, 0, index)


rows = 64
cols = 40
n_index = 30


def get_inputs():
    x = torch.randn(rows, cols)
    index = torch.randint(0, rows, (n_index,))
    return [x, index]


def get_init_inputs():
    return []
