import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Matrix product followed by the maximum over each row of the result.
    """

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B).amax(dim=-1)


M = 40
K = 32
N = 48


def get_inputs():
    A = torch.randn(M, K)
    B = torch.randn(K, N)
    return [A, B]


def get_init_inputs():
    return []
