import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """
    Linear layer, division by a constant, then exact (erf) GELU.
    """

    def __init__(self, in_features: int, out_features: int, divisor: float):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.divisor = divisor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.linear(x)
        x = x / self.divisor
        return F.gelu(x)


batch_size = 32
in_features = 48
out_features = 40
divisor = 2.0


def get_inputs():
    x = torch.randn(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features, divisor]
