import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Causal attention weights: future positions (j > i) masked to -inf, then softmax over j.
    """

    def __init__(self):
        super().__init__()

    def forward(self, scores: torch.Tensor) -> torch.Tensor:
        T = scores.size(-1)
        mask = torch.triu(torch.ones(T, T, dtype=torch.bool, device=scores.device), diagonal=1)
        return torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)


batch_size = 4
seq_len = 32


def get_inputs():
    scores = torch.randn(batch_size, seq_len, seq_len) * 2
    return [scores]


def get_init_inputs():
    return []
