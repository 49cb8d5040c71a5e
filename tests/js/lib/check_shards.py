"""Reads back a sharded model the npm package wrote, with the reference.

    python check_shards.py DIR PLAN.json

PLAN.json: {"max_shard_size": bytes, "tensors": [[name, data bytes], ...]}
(the tensors in the order they were given). Checks, and exits 1 with the
reason on the first failure:

- every shard opens with the reference's safe_open, and every tensor in it
  reads (get_tensor);
- the index's weight_map names every tensor of every shard, each in the
  shard that holds it, and nothing else; metadata.total_size is the sum of
  the tensors' data bytes;
- the split is huggingface_hub's (split_state_dict_into_shards_factory):
  the same file names holding the same tensors, the same total_size;
- the index text is what transformers' save_pretrained writes
  (json.dumps(index, indent=2, sort_keys=True) + newline).

Prints the shard file names, one a line.
"""

import json
import os
import sys

from huggingface_hub.serialization import split_state_dict_into_shards_factory
from safetensors import safe_open


def fail(msg):
    print(msg, file=sys.stderr)
    sys.exit(1)


def main(folder, plan_path):
    with open(plan_path) as f:
        plan = json.load(f)
    sizes = dict((name, size) for name, size in plan["tensors"])
    split = split_state_dict_into_shards_factory(
        sizes,
        get_storage_size=lambda size: size,
        get_storage_id=lambda size: None,
        filename_pattern="model{suffix}.safetensors",
        max_shard_size=plan["max_shard_size"],
    )
    index_path = os.path.join(folder, "model.safetensors.index.json")
    found = {}
    for shard, names in split.filename_to_tensors.items():
        with safe_open(os.path.join(folder, shard), framework="numpy") as f:
            keys = list(f.keys())
            for k in keys:
                f.get_tensor(k)
        if sorted(keys) != sorted(names):
            fail(f"{shard} holds {sorted(keys)}, huggingface_hub puts {sorted(names)} there")
        for k in keys:
            found[k] = shard
    if len(split.filename_to_tensors) == 1:
        if os.path.exists(index_path):
            fail("one shard, and an index")
    else:
        with open(index_path) as f:
            text = f.read()
        index = json.loads(text)
        if index["weight_map"] != found:
            fail(f"weight_map {index['weight_map']} != the shards' tensors {found}")
        if index["metadata"]["total_size"] != sum(sizes.values()) or index["metadata"] != split.metadata:
            fail(f"metadata {index['metadata']}, expected {split.metadata}")
        if text != json.dumps(index, indent=2, sort_keys=True) + "\n":
            fail("the index text is not json.dumps(index, indent=2, sort_keys=True) + newline")
    extra = sorted(set(os.listdir(folder)) - set(split.filename_to_tensors) - {"model.safetensors.index.json"})
    if extra:
        fail(f"files beside the shards: {extra}")
    print("\n".join(split.filename_to_tensors))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
