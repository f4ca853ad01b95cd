import torch
import torch_npu
try:
    # TODO(ascend-port): NPU409 [low] flash_attn has no NPU build, so this import fails there: port unpad_input (a result not unpacked: 4 values before flash-attn 2.7, 5 since), unpad_input_for_concatenated_sequences by hand (NPU400-NPU406 port its attention calls)
    from flash_attn.bert_padding import unpad_input, unpad_input_for_concatenated_sequences
except ImportError:  # no NPU build: the code that uses these names fails when it runs
    unpad_input = None
    unpad_input_for_concatenated_sequences = None


def _npu_pad_input(hidden_states, indices, batch, seqlen):
    """flash_attn.bert_padding.pad_input (written by ascend-port, rule NPU410): the tokens scattered back to
    (batch, seqlen, ...), zeros elsewhere."""
    out = hidden_states.new_zeros(batch * seqlen, *hidden_states.shape[1:])
    out[indices] = hidden_states
    return out.reshape(batch, seqlen, *hidden_states.shape[1:])


def whole(x, mask):
    # the result is kept whole: which release's tuple it expects is unknown, left on flash-attn
    result = unpad_input(x, mask)
    return _npu_pad_input(result[0], result[1], x.shape[0], x.shape[1])


def concatenated(x, lengths):
    return unpad_input_for_concatenated_sequences(x, lengths)
