import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Linear layer, sigmoid, then the sum over features: one score per row.
    """

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.linear(x)
        x = torch.sigmoid(x)
        return torch.sum(x, dim=1)


batch_size = 64
in_features = 40
out_features = 24


def get_inputs():
    x = torch.randn(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features]
