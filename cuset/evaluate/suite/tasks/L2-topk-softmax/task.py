import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Mixture-of-experts router: the k largest logits per token, their softmax weights and
    their expert indices.
    """

    def __init__(self, k: int):
        super().__init__()
        self.k = k

    def forward(self, logits: torch.Tensor):
        values, indices = torch.topk(logits, self.k, dim=-1)
        return torch.softmax(values, dim=-1), indices


tokens = 64
experts = 8
k = 4


def get_inputs():
    logits = torch.randn(tokens, experts)
    return [logits]


def get_init_inputs():
    return [k]
