//! `edit`'s metadata options: set, drop or clear `__metadata__` entries
//! (docs/format.md R7: a map from strings to strings).
//!
//! The rules, as `--help` states them: `--set-metadata KEY=VALUE` splits at
//! the first `=` (the value may hold more), adds KEY or replaces its value,
//! and creates the map when the file has none. `--drop-metadata KEY`
//! removes KEY; a key the file does not have is no change (as gguf's
//! `--remove-metadata`), and the status line's count of keys dropped shows
//! it. A map left without keys is written `{}`. `--clear-metadata` writes no
//! `__metadata__` at all, unless `--set-metadata` gives new keys. The order
//! is clear, drop, then set; a key both set and dropped, or set twice, is a
//! usage error, as is the key `__metadata__`, which names the map itself.

/// The metadata options of `edit` (their ids are distinct from `edit`'s
/// tensor options, `drop` among them, which share one namespace).
#[derive(clap::Args, Debug, Default)]
pub struct MetadataEdit {
    /// Set the metadata entry KEY to VALUE (split at the first `=`; VALUE
    /// may be empty or hold `=`), creating the metadata if the file has
    /// none; repeatable.
    #[arg(id = "set_metadata", long = "set-metadata", value_name = "KEY=VALUE", value_parser = key_value)]
    pub set: Vec<(String, String)>,
    /// Remove the metadata entry KEY (a key the file lacks changes nothing,
    /// and counts as not dropped in the status line); repeatable. Removing
    /// every key leaves empty metadata, `{}`.
    #[arg(id = "drop_metadata", long = "drop-metadata", value_name = "KEY")]
    pub drop: Vec<String>,
    /// Write no `__metadata__` at all (then --set-metadata starts a new one).
    #[arg(
        id = "clear_metadata",
        long = "clear-metadata",
        conflicts_with = "drop_metadata"
    )]
    pub clear: bool,
}

/// The top-level header key the metadata map is stored under.
const RESERVED: &str = "__metadata__";

fn key_value(s: &str) -> Result<(String, String), String> {
    let (key, value) = s
        .split_once('=')
        .ok_or("expected KEY=VALUE, e.g. format=pt")?;
    Ok((key.to_owned(), value.to_owned()))
}

/// What a metadata edit changed, for `edit`'s status line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Changed {
    /// Keys added or given a new value.
    pub set: usize,
    /// Keys removed (by --drop-metadata, or all of them by --clear-metadata).
    pub dropped: usize,
    /// Keys in the output's metadata.
    pub keys: usize,
}

impl MetadataEdit {
    /// Whether any metadata option was given.
    pub fn is_empty(&self) -> bool {
        self.set.is_empty() && self.drop.is_empty() && !self.clear
    }

    /// The usage error in these options that clap cannot see, if any.
    pub fn usage_error(&self) -> Option<String> {
        let reserved = |what: &str| {
            format!(
                "{what}: {RESERVED:?} is the header key that holds the metadata, not a key in it; \
                 give the metadata's own keys (or --clear-metadata to remove it all)"
            )
        };
        if self.set.iter().any(|(k, _)| k == RESERVED) {
            return Some(reserved("--set-metadata"));
        }
        if self.drop.iter().any(|k| k == RESERVED) {
            return Some(reserved("--drop-metadata"));
        }
        for (i, (key, _)) in self.set.iter().enumerate() {
            if self.set[..i].iter().any(|(k, _)| k == key) {
                return Some(format!("--set-metadata: key {key:?} given twice"));
            }
            if self.drop.contains(key) {
                return Some(format!(
                    "key {key:?} is both set (--set-metadata) and dropped (--drop-metadata); give one"
                ));
            }
        }
        None
    }

    /// `metadata` (`None`: the file has no `__metadata__`) with these edits
    /// applied, and what changed.
    pub fn apply(
        &self,
        metadata: Option<Vec<(String, String)>>,
    ) -> (Option<Vec<(String, String)>>, Changed) {
        let mut changed = Changed::default();
        let mut metadata = if self.clear {
            changed.dropped = metadata.map_or(0, |m| m.len());
            None
        } else {
            metadata
        };
        if let Some(pairs) = metadata.as_mut() {
            let before = pairs.len();
            pairs.retain(|(k, _)| !self.drop.contains(k));
            changed.dropped += before - pairs.len();
        }
        if !self.set.is_empty() {
            let pairs = metadata.get_or_insert_with(Vec::new);
            for (key, value) in &self.set {
                match pairs.iter_mut().find(|(k, _)| k == key) {
                    Some((_, old)) if old == value => {}
                    Some((_, old)) => {
                        old.clone_from(value);
                        changed.set += 1;
                    }
                    None => {
                        pairs.push((key.clone(), value.clone()));
                        changed.set += 1;
                    }
                }
            }
        }
        changed.keys = metadata.as_ref().map_or(0, Vec::len);
        (metadata, changed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn edit(set: &[(&str, &str)], drop: &[&str], clear: bool) -> MetadataEdit {
        MetadataEdit {
            set: pairs(set),
            drop: drop.iter().map(|s| s.to_string()).collect(),
            clear,
        }
    }

    #[test]
    fn key_value_splits_at_the_first_equals_sign() {
        assert_eq!(key_value("a=b=c"), Ok(("a".into(), "b=c".into())));
        assert_eq!(key_value("a="), Ok(("a".into(), String::new())));
        assert_eq!(key_value("=v"), Ok((String::new(), "v".into())));
        assert!(key_value("novalue").is_err());
    }

    #[test]
    fn set_creates_replaces_and_drop_of_a_missing_key_changes_nothing() {
        let e = edit(&[("format", "pt")], &["gone"], false);
        let (out, changed) = e.apply(None);
        assert_eq!(out, Some(pairs(&[("format", "pt")])));
        assert_eq!(
            changed,
            Changed {
                set: 1,
                dropped: 0,
                keys: 1
            }
        );
        let (out, changed) = e.apply(Some(pairs(&[("format", "pt"), ("b", "1")])));
        assert_eq!(out, Some(pairs(&[("format", "pt"), ("b", "1")])));
        assert_eq!((changed.set, changed.dropped), (0, 0));
        let (out, _) = edit(&[], &["b"], false).apply(Some(pairs(&[("b", "1")])));
        assert_eq!(out, Some(Vec::new()));
    }

    #[test]
    fn clear_removes_the_map_and_set_starts_a_new_one() {
        let old = Some(pairs(&[("a", "1"), ("b", "2")]));
        assert_eq!(edit(&[], &[], true).apply(old.clone()).0, None);
        let (out, changed) = edit(&[("c", "3")], &[], true).apply(old);
        assert_eq!(out, Some(pairs(&[("c", "3")])));
        assert_eq!((changed.set, changed.dropped, changed.keys), (1, 2, 1));
    }

    #[test]
    fn conflicting_and_reserved_keys_are_usage_errors() {
        assert!(edit(&[("a", "1")], &["a"], false)
            .usage_error()
            .is_some_and(|m| m.contains("both set")));
        assert!(edit(&[("a", "1"), ("a", "2")], &[], false)
            .usage_error()
            .is_some_and(|m| m.contains("twice")));
        assert!(edit(&[("__metadata__", "x")], &[], false)
            .usage_error()
            .is_some_and(|m| m.contains("--clear-metadata")));
        assert!(edit(&[], &["__metadata__"], false).usage_error().is_some());
        assert_eq!(
            edit(&[("a", "1")], &["b"], false).usage_error(),
            None::<String>
        );
    }
}
