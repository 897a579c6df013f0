import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Weighted bin counts: out[b] = sum of weights[i] over i with idx[i] == b.
    """

    def __init__(self, bins: int):
        super().__init__()
        self.bins = bins

    def forward(self, idx: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
        return torch.bincount(idx, weights=weights, minlength=self.bins)


n = 3000
bins = 32


def get_inputs():
    idx = torch.randint(0, bins, (n,))
    weights = torch.randn(n)
    return [idx, weights]


def get_init_inputs():
    return [bins]
