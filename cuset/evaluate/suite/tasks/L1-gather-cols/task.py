import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Gather along dim 1: out[i][j] = x[i][index[i][j]].
    """

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        return torch.gather(x, 1, index)


rows = 20
cols = 50
n_pick = 30


def get_inputs():
    x = torch.randn(rows, cols)
    index = torch.randint(0, cols, (rows, n_pick))
    return [x, index]


def get_init_inputs():
    return []
