import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Embedding lookup, then the mean over the sequence (a bag-of-words sentence vector).
    """

    def __init__(self, num_embeddings: int, embedding_dim: int):
        super().__init__()
        self.embed = nn.Embedding(num_embeddings, embedding_dim)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.embed(ids).mean(dim=1)


batch_size = 8
seq_len = 10
num_embeddings = 40
embedding_dim = 16


def get_inputs():
    ids = torch.randint(0, num_embeddings, (batch_size, seq_len))
    return [ids]


def get_init_inputs():
    return [num_embeddings, embedding_dim]
