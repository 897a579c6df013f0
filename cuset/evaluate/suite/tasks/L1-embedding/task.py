import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Embedding lookup: token ids (batch, seq) -> vectors (batch, seq, dim).
    """

    def __init__(self, num_embeddings: int, embedding_dim: int):
        super().__init__()
        self.embed = nn.Embedding(num_embeddings, embedding_dim)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.embed(ids)


batch_size = 6
seq_len = 13
num_embeddings = 50
embedding_dim = 24


def get_inputs():
    ids = torch.randint(0, num_embeddings, (batch_size, seq_len))
    return [ids]


def get_init_inputs():
    return [num_embeddings, embedding_dim]
