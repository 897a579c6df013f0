import torch
import torch.nn as nn


class Model(nn.Module):
    """
    out = beta * bias + alpha * (A @ B), the bias broadcast over rows (torch.addmm).
    """

    def __init__(self, beta: float, alpha: float):
        super().__init__()
        self.beta = beta
        self.alpha = alpha

    def forward(self, bias: torch.Tensor, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.addmm(bias, A, B, beta=self.beta, alpha=self.alpha)


M = 48
K = 40
N = 72


def get_inputs():
    bias = torch.randn(N)
    A = torch.randn(M, K)
    B = torch.randn(K, N)
    return [bias, A, B]


def get_init_inputs():
    return [0.5, 2.0]
