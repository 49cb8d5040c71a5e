//! The `__metadata__` map: string keys to string values, borrowed from the header.

use crate::read::names;
use crate::read::string::raw_string_at;
use crate::table::Entry;
use crate::view::name::Name;

/// The header's `__metadata__` map. Keys are unique (checked when parsing).
///
/// ```
/// use safetensors_nano::{SafeTensors, Table};
/// let header = br#"{"__metadata__":{"format":"pt","note":"caf\u00e9"}}"#;
/// let mut file = (header.len() as u64).to_le_bytes().to_vec();
/// file.extend_from_slice(header);
/// let st = SafeTensors::parse(&file, Table::<4>::new()).unwrap();
/// let meta = st.metadata().unwrap();
/// assert_eq!(meta.get("format").unwrap(), "pt");
/// assert_eq!(meta.get("note").unwrap(), "café");
/// let keys: Vec<String> = meta.iter().map(|(k, _)| k.to_string()).collect();
/// assert_eq!(keys, ["format", "note"]);
/// ```
#[derive(Clone, Copy)]
pub struct Metadata<'a, 't> {
    json: &'a [u8],
    /// Pairs in reverse header order (the parser fills them from the back).
    entries: &'t [Entry],
    by_name: &'t [u32],
}

impl<'a, 't> Metadata<'a, 't> {
    pub(crate) fn new(json: &'a [u8], entries: &'t [Entry], by_name: &'t [u32]) -> Self {
        Metadata {
            json,
            entries,
            by_name,
        }
    }

    /// Number of pairs.
    ///
    /// ```
    /// # use safetensors_nano::{SafeTensors, Table};
    /// # let h = br#"{"__metadata__":{}}"#;
    /// # let mut file = (h.len() as u64).to_le_bytes().to_vec(); file.extend_from_slice(h);
    /// let st = SafeTensors::parse(&file, Table::<1>::new()).unwrap();
    /// assert_eq!(st.metadata().unwrap().len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the map is empty (it is still present: `{}`).
    ///
    /// ```
    /// # use safetensors_nano::{SafeTensors, Table};
    /// # let h = br#"{"__metadata__":{}}"#;
    /// # let mut file = (h.len() as u64).to_le_bytes().to_vec(); file.extend_from_slice(h);
    /// let st = SafeTensors::parse(&file, Table::<1>::new()).unwrap();
    /// assert!(st.metadata().unwrap().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn pair(&self, entry: &Entry) -> (Name<'a>, Name<'a>) {
        (
            Name::from_raw(raw_string_at(self.json, entry.name_start())),
            Name::from_raw(raw_string_at(self.json, entry.value_start())),
        )
    }

    /// The value for `key` (compared decoded). O(log n).
    ///
    /// ```
    /// # use safetensors_nano::{SafeTensors, Table};
    /// # let h = br#"{"__metadata__":{"a":"1"}}"#;
    /// # let mut file = (h.len() as u64).to_le_bytes().to_vec(); file.extend_from_slice(h);
    /// let st = SafeTensors::parse(&file, Table::<1>::new()).unwrap();
    /// assert_eq!(st.metadata().unwrap().get("a").unwrap(), "1");
    /// assert!(st.metadata().unwrap().get("b").is_none());
    /// ```
    pub fn get(&self, key: &str) -> Option<Name<'a>> {
        let i = names::find(self.json, self.entries, self.by_name, key)?;
        self.entries.get(i as usize).map(|e| self.pair(e).1)
    }

    /// `(key, value)` pairs in header order.
    ///
    /// ```
    /// # use safetensors_nano::{SafeTensors, Table};
    /// # let h = br#"{"__metadata__":{"b":"2","a":"1"}}"#;
    /// # let mut file = (h.len() as u64).to_le_bytes().to_vec(); file.extend_from_slice(h);
    /// let st = SafeTensors::parse(&file, Table::<2>::new()).unwrap();
    /// let (key, value) = st.metadata().unwrap().iter().next().unwrap();
    /// assert_eq!((key.as_str(), value.as_str()), (Some("b"), Some("2")));
    /// ```
    pub fn iter(
        &self,
    ) -> impl DoubleEndedIterator<Item = (Name<'a>, Name<'a>)> + ExactSizeIterator + use<'a, 't>
    {
        let this = *self;
        self.entries.iter().rev().map(move |e| this.pair(e))
    }
}

impl core::fmt::Debug for Metadata<'_, '_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}
