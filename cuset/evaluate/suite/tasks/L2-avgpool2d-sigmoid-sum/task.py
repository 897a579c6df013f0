import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """
    2x2 average pooling, sigmoid, then the sum over each channel's spatial positions.
    """

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.avg_pool2d(x, kernel_size=2)
        x = torch.sigmoid(x)
        return torch.sum(x, dim=(2, 3))


batch_size = 4
channels = 6
height = 12
width = 12


def get_inputs():
    x = torch.randn(batch_size, channels, height, width) * 2
    return [x]


def get_init_inputs():
    return []
