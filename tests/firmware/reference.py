"""The firmware's computation, repeated on the host with numpy.

The same on every board: the firmware never fuses a multiply and an add
(Rust does not contract floating point), and each f32 ``*`` and ``+`` is one
correctly rounded IEEE operation whether the FPU does it (Cortex-M4F) or
compiler-builtins' soft float (Cortex-M0 ``__aeabi_fmul``/``__aeabi_fadd``,
RV32IMAC ``__mulsf3``/``__addsf3``), so every board must match this bit for bit.

The files are read with the reference implementation (``safetensors.deserialize``)
and every step is the firmware's, in float32, in the same order (see
firmware/src/model.rs): ``x = pixel / 16``; per output ``acc = 0``, then
``acc = acc + w[j, i] * x[i]`` for ``i`` ascending, then ``acc * scale[j]``
(fc3), then ``acc + bias[j]``; ReLU on fc1 and fc2. numpy's float32 ``*`` and
``+`` on arrays are single IEEE operations, so the logits agree bit for bit.
"""

import ml_dtypes
import numpy as np
import safetensors

DTYPES = {
    "F32": np.float32,
    "F16": np.float16,
    "BF16": ml_dtypes.bfloat16,
    "I8": np.int8,
    "U8": np.uint8,
}

LAYERS = [
    # weight, bias, scale, relu
    ("fc1.weight", "fc1.bias", None, True),
    ("fc2.weight", "fc2.bias", None, True),
    ("fc3.weight", "fc3.bias", "fc3.scale", False),
]


def load(data):
    """{name: ndarray} from safetensors bytes, parsed by the reference."""
    tensors = {}
    for name, info in safetensors.deserialize(data):
        dtype = DTYPES[info["dtype"]]
        tensors[name] = np.frombuffer(bytes(info["data"]), dtype=dtype).reshape(info["shape"])
    return tensors


def dense(x, w, bias, scale, relu):
    """One layer for a batch: x [n, in] f32, w [out, in] -> [n, out] f32."""
    w = w.astype(np.float32)
    acc = np.zeros((x.shape[0], w.shape[0]), dtype=np.float32)
    for i in range(w.shape[1]):
        acc = acc + w[None, :, i] * x[:, i : i + 1]
    if scale is not None:
        acc = acc * scale[None, :]
    acc = acc + bias[None, :]
    if relu:
        acc = np.where(acc > np.float32(0), acc, np.float32(0))
    return acc


def logits(model, pixels):
    """Logits [n, 10] f32 for pixels [n, 64] u8."""
    x = pixels.astype(np.float32) / np.float32(16)
    for weight, bias, scale, relu in LAYERS:
        x = dense(
            x,
            model[weight],
            model[bias].astype(np.float32),
            None if scale is None else model[scale].astype(np.float32),
            relu,
        )
    return x


def fnv1a(data, h=0x811C9DC5):
    for b in data:
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def evaluate(model_bytes, samples_bytes):
    """What the firmware prints for a pass: predictions, correct, total, logits
    hash, and the hash of the predicted classes (one byte each)."""
    model = load(model_bytes)
    samples = load(samples_bytes)
    out = logits(model, samples["x"])
    predictions = np.argmax(out, axis=1)  # the first largest, as the firmware
    labels = samples["y"].astype(np.int64)
    return {
        "predictions": "".join(str(int(p)) for p in predictions),
        "correct": int((predictions == labels).sum()),
        "total": int(labels.shape[0]),
        "logits_hash": fnv1a(out.astype("<f4").tobytes()),
        "predictions_hash": fnv1a(bytes(int(p) for p in predictions)),
    }
