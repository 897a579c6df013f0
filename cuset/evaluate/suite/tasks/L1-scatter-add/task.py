import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Scatter-add rows of src into a zero tensor: out[index[i][j]][j] += src[i][j].
    """

    def __init__(self, out_rows: int):
        super().__init__()
        self.out_rows = out_rows

    def forward(self, src: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        out = torch.zeros(self.out_rows, src.size(1), dtype=src.dtype, device=src.device)
        return out.scatter_add_(0, index, src)


n = 200
cols = 16
out_rows = 32


def get_inputs():
    src = torch.randn(n, cols)
    index = torch.randint(0, out_rows, (n, cols))
    return [src, index]


def get_init_inputs():
    return [out_rows]
