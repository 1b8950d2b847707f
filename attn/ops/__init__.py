"""The operations: attention's pieces as functions of tensors, with no weights.

- :mod:`attn.ops.bias`: positions as masks and biases on the scores (sliding windows,
  attention sinks, ALiBi);
- :mod:`attn.ops.tiled`: attention in tiles of keys with the online softmax, and the
  merge of partial results;
- :mod:`attn.ops.linear`: linear attention, the delta rule and the gated delta rule,
  each in a parallel, a recurrent and a chunked form.

:mod:`attn.functional` gathers the public functions of this floor with scaled
dot-product attention, the masks and the heads' split and merge.
"""
from . import bias, linear, tiled

__all__ = ["bias", "tiled", "linear"]
