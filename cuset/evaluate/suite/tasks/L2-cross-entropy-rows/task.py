import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """
    Per-sample cross-entropy of logits against integer class targets (log-softmax then NLL).
    """

    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(logits, target, reduction="none")


batch_size = 48
num_classes = 100


def get_inputs():
    logits = torch.randn(batch_size, num_classes) * 3
    target = torch.randint(0, num_classes, (batch_size,))
    return [logits, target]


def get_init_inputs():
    return []
