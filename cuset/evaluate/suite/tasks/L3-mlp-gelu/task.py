import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """
    Two-layer MLP: Linear, GELU, Linear.
    """

    def __init__(self, in_features: int, hidden: int, out_features: int):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden)
        self.fc2 = nn.Linear(hidden, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(F.gelu(self.fc1(x)))


batch_size = 40
in_features = 30
hidden = 50
out_features = 30


def get_inputs():
    x = torch.randn(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, hidden, out_features]
