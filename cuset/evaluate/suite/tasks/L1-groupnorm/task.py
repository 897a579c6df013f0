import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Group normalisation: channels split into groups, each (sample, group) normalised over its
    channels and positions, then a per-channel affine.
    """

    def __init__(self, num_groups: int, num_channels: int):
        super().__init__()
        self.gn = nn.GroupNorm(num_groups, num_channels)
        with torch.no_grad():
            self.gn.weight.uniform_(0.5, 1.5)
            self.gn.bias.uniform_(-0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.gn(x)


batch_size = 4
num_groups = 4
num_channels = 16
length = 40


def get_inputs():
    x = torch.randn(batch_size, num_channels, length) * 2 + 0.5
    return [x]


def get_init_inputs():
    return [num_groups, num_channels]
