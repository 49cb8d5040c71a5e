"""The reference side of cli/tests/sharded.rs: the shards and the index that
`split` wrote, read by the Python `safetensors` package.

- every shard loads with safetensors.numpy, and together they hold exactly
  the original file's tensors, with the same values;
- the index is what the Hub's tools write: json.dumps(index, indent=2,
  sort_keys=True) plus a newline, with metadata.total_size the sum of the
  tensors' sizes and weight_map naming each tensor's shard;
- shards are named model-0000i-of-0000N.safetensors, and each holds at most
  MAX bytes of tensor data unless it is a single tensor larger than that.

Usage: check_split.py ORIGINAL DIR MAX  (prints "ok N" for N shards)
"""
import json
import os
import sys

from safetensors.numpy import load_file

original, folder, limit = sys.argv[1], sys.argv[2], int(sys.argv[3])
source = load_file(original)
text = open(os.path.join(folder, "model.safetensors.index.json")).read()
index = json.loads(text)
assert text == json.dumps(index, indent=2, sort_keys=True) + "\n", text
assert set(index) == {"metadata", "weight_map"}, index.keys()
assert index["metadata"] == {"total_size": sum(a.nbytes for a in source.values())}
weight_map = index["weight_map"]
assert sorted(weight_map) == sorted(source)
shards = sorted(set(weight_map.values()))
n = len(shards)
assert shards == [f"model-{i:05d}-of-{n:05d}.safetensors" for i in range(1, n + 1)], shards
assert sorted(f for f in os.listdir(folder) if f.endswith(".safetensors")) == shards
seen = {}
for shard in shards:
    tensors = load_file(os.path.join(folder, shard))
    size = sum(a.nbytes for a in tensors.values())
    assert size <= limit or len(tensors) == 1, (shard, size)
    for name, array in tensors.items():
        assert weight_map[name] == shard, name
        assert name not in seen, name
        seen[name] = array
assert sorted(seen) == sorted(source)
for name, array in source.items():
    assert seen[name].dtype == array.dtype and seen[name].shape == array.shape, name
    assert seen[name].tobytes() == array.tobytes(), name
print(f"ok {n}")
