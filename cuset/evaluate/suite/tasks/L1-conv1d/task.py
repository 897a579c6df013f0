import torch
import torch.nn as nn


class Model(nn.Module):
    """
    1-D convolution, stride 1, no padding: (batch, in_channels, length) ->
    (batch, out_channels, length - kernel_size + 1).
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


batch_size = 2
in_channels = 4
out_channels = 8
kernel_size = 5
length = 60


def get_inputs():
    x = torch.randn(batch_size, in_channels, length)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
