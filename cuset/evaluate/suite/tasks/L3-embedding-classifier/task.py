import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Bag-of-embeddings text classifier: embedding lookup, mean over the sequence, Linear, log-softmax.
    """

    def __init__(self, vocab: int, dim: int, classes: int):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.fc = nn.Linear(dim, classes)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        h = self.embed(ids).mean(dim=1)
        return torch.log_softmax(self.fc(h), dim=-1)


batch_size = 8
seq_len = 12
vocab = 64
dim = 24
classes = 5


def get_inputs():
    ids = torch.randint(0, vocab, (batch_size, seq_len))
    return [ids]


def get_init_inputs():
    return [vocab, dim, classes]
