import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """
    Multi-head causal self-attention core on (batch, heads, seq, head_dim) tensors.
    """

    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


batch_size = 2
heads = 2
seq_len = 32
head_dim = 16


def get_inputs():
    q = torch.randn(batch_size, heads, seq_len, head_dim)
    k = torch.randn(batch_size, heads, seq_len, head_dim)
    v = torch.randn(batch_size, heads, seq_len, head_dim)
    return [q, k, v]


def get_init_inputs():
    return []
