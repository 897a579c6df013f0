import math

import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Single-head scaled dot-product attention: softmax(q k^T / sqrt(d)) v.
    """

    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(q.size(-1))
        return torch.matmul(torch.softmax(scores, dim=-1), v)


batch_size = 4
seq_len = 32
head_dim = 16


def get_inputs():
    q = torch.randn(batch_size, seq_len, head_dim)
    k = torch.randn(batch_size, seq_len, head_dim)
    v = torch.randn(batch_size, seq_len, head_dim)
    return [q, k, v]


def get_init_inputs():
    return []
