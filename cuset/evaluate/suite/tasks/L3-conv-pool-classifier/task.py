import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Small CNN classifier: Conv2d (3x3, padding 1), ReLU, 2x2 max pooling, flatten, Linear.
    """

    def __init__(self, in_channels: int, channels: int, image_size: int, classes: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, channels, kernel_size=3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(channels * (image_size // 2) ** 2, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.pool(torch.relu(self.conv(x)))
        return self.fc(torch.flatten(x, 1))


batch_size = 2
in_channels = 3
channels = 8
image_size = 8
classes = 10


def get_inputs():
    x = torch.randn(batch_size, in_channels, image_size, image_size)
    return [x]


def get_init_inputs():
    return [in_channels, channels, image_size, classes]
