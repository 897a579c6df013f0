import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """
    Log-sigmoid, log(1 / (1 + exp(-x))), elementwise; inputs reach |x| = 30.
    """

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.logsigmoid(x)


batch_size = 12
dim = 700


def get_inputs():
    x = torch.randn(batch_size, dim) * 10
    return [x]


def get_init_inputs():
    return []
