import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """
    ReLU6: min(max(x, 0), 6), elementwise.
    """

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu6(x)


batch_size = 8
dim = 1000


def get_inputs():
    x = torch.randn(batch_size, dim) * 4
    return [x]


def get_init_inputs():
    return []
