import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Matrix product of two transposed operands: C = A^T B^T, A of shape (K, M), B of shape (N, K).
    """

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A.T, B.T)


M = 56
K = 40
N = 72


def get_inputs():
    A = torch.randn(K, M)
    B = torch.randn(N, K)
    return [A, B]


def get_init_inputs():
    return []
