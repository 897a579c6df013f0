import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """
    Soft shrinkage: x - lambd where x > lambd, x + lambd where x < -lambd, else 0.
    """

    def __init__(self, lambd: float):
        super().__init__()
        self.lambd = lambd

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.softshrink(x, lambd=self.lambd)


batch_size = 7
dim = 999
lambd = 0.5


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return [lambd]
