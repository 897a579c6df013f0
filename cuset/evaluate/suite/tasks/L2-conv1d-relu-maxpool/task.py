import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """
    Conv1d (valid), ReLU, then max pooling with window 2 and stride 2.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = torch.relu(x)
        return F.max_pool1d(x, kernel_size=2)


batch_size = 2
in_channels = 3
out_channels = 6
kernel_size = 3
length = 66


def get_inputs():
    x = torch.randn(batch_size, in_channels, length)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
