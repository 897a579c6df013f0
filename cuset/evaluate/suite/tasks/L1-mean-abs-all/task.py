import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Mean absolute value of the whole tensor (a scalar).
    """

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.mean(torch.abs(x))


batch_size = 64
dim = 500


def get_inputs():
    # a scale drawn per call: mean |N(0, 1)| over 32000 values is 0.798 +- 0.004 for every draw,
    # which a constant answer would match (flagged by `cuset suite validate` as input_independent)
    scale = 0.25 + 4.0 * torch.rand(()).item()
    x = torch.randn(batch_size, dim) * scale
    return [x]


def get_init_inputs():
    return []
