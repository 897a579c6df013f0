import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """
    SwiGLU feed-forward block (LLaMA style): down(silu(gate(x)) * up(x)), no biases.
    """

    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.gate = nn.Linear(dim, hidden, bias=False)
        self.up = nn.Linear(dim, hidden, bias=False)
        self.down = nn.Linear(hidden, dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(F.silu(self.gate(x)) * self.up(x))


batch_size = 24
dim = 32
hidden = 40


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return [dim, hidden]
