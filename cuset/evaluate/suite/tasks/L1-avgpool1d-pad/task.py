import torch
import torch.nn as nn


class Model(nn.Module):
    """
    1-D average pooling, kernel 3, stride 2, zero padding 1 (padding counts in the average).
    """

    def __init__(self):
        super().__init__()
        self.pool = nn.AvgPool1d(kernel_size=3, stride=2, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


batch_size = 4
channels = 6
length = 50


def get_inputs():
    x = torch.randn(batch_size, channels, length)
    return [x]


def get_init_inputs():
    return []
