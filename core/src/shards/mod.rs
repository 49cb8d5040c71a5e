//! Sharded checkpoints (feature `std`): the `model.safetensors.index.json`
//! format that maps each tensor to the shard file holding it
//! ([`index`]), and the check of such an index against the shards' headers
//! ([`check`]).

pub(crate) mod check;
pub(crate) mod index;
