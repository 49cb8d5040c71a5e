#!/usr/bin/env python3
"""Train the firmware's digit classifier and write it as safetensors.

A 64-32-16-10 perceptron on scikit-learn's 8x8 digits (the data ships inside
the scikit-learn package: nothing is downloaded). The trained weights are
stored with mixed dtypes, written by the reference Python writer
(``safetensors.numpy.save``):

    fc1.weight  F16  [32, 64]   fc1.bias  F32 [32]
    fc2.weight  BF16 [16, 32]   fc2.bias  F32 [16]
    fc3.weight  I8   [10, 16]   fc3.scale F32 [10]   fc3.bias F32 [10]

Weights are stored [out, in] (row j = the weights of output j), so a reader
can stream a layer one row at a time. fc3 is quantized per output row:
``w ~= fc3.weight[j, i] * fc3.scale[j]``. The input is the pixel value (0..16)
divided by 16.

The held-out test split goes to a second file, ``samples.safetensors``:
``x`` U8 [n, 64] (pixels), ``y`` U8 [n] (labels).

Everything is seeded: the same packages give the same bytes.

Usage: train_digits.py [--out DIR]   (default: firmware/model)
"""

import argparse
import os
import sys
import warnings

import ml_dtypes
import numpy as np
from safetensors.numpy import save
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier

SEED = 0
HIDDEN = (32, 16)
TEST_FRACTION = 0.2


def quantize_rows_i8(w):
    """Symmetric per-row int8 quantization of an [out, in] f32 matrix."""
    peak = np.abs(w).max(axis=1)
    scale = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    q = np.clip(np.rint(w / scale[:, None]), -127, 127).astype(np.int8)
    return q, scale


def train():
    digits = load_digits()
    x = digits.data.astype(np.uint8)  # pixel values 0..16
    y = digits.target.astype(np.uint8)
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=TEST_FRACTION, random_state=SEED, stratify=y
    )
    clf = MLPClassifier(
        hidden_layer_sizes=HIDDEN,
        activation="relu",
        solver="adam",
        max_iter=400,
        random_state=SEED,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(x_train.astype(np.float64) / 16.0, y_train)
    float_acc = clf.score(x_test.astype(np.float64) / 16.0, y_test)

    (w1, w2, w3), (b1, b2, b3) = clf.coefs_, clf.intercepts_
    q3, s3 = quantize_rows_i8(np.ascontiguousarray(w3.T).astype(np.float32))
    tensors = {
        "fc1.weight": np.ascontiguousarray(w1.T).astype(np.float16),
        "fc1.bias": b1.astype(np.float32),
        "fc2.weight": np.ascontiguousarray(w2.T).astype(np.float32).astype(ml_dtypes.bfloat16),
        "fc2.bias": b2.astype(np.float32),
        "fc3.weight": q3,
        "fc3.scale": s3,
        "fc3.bias": b3.astype(np.float32),
    }
    metadata = {
        "arch": "64-32-16-10 relu",
        "input": "pixel/16",
        "float_test_accuracy": f"{float_acc:.4f}",
    }
    samples = {"x": np.ascontiguousarray(x_test), "y": np.ascontiguousarray(y_test)}
    return tensors, metadata, samples, float_acc


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join("firmware", "model"))
    args = parser.parse_args(argv)
    tensors, metadata, samples, float_acc = train()
    os.makedirs(args.out, exist_ok=True)
    model = save(tensors, metadata=metadata)
    sample_file = save(samples)
    for name, data in (("model.safetensors", model), ("samples.safetensors", sample_file)):
        path = os.path.join(args.out, name)
        with open(path, "wb") as f:
            f.write(data)
        print(f"wrote {path} ({len(data)} bytes)", file=sys.stderr)
    print(f"float model test accuracy {float_acc:.4f}", file=sys.stderr)


if __name__ == "__main__":
    main()
