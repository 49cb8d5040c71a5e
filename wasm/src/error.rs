//! The one error conversion: an error crosses to JS as numbers only, and
//! the ES modules write its message from the generated tables
//! (`wasm/js/generated/errors.js`). Formatting text here would link
//! `core::fmt` and every message into the `.wasm`.
//!
//! Numbers: see [`wire`](crate::wire) (`ERROR_*`). The kind crosses as its
//! number: the core's [`ErrorKind::code`], then this layer's [`LayerKind`]s
//! after the core's; [`kinds`] is the table of both, by number.

use alloc::vec::Vec;

use safetensors_nano::{Error, ErrorKind, KindInfo, TensorRef, WireField, WireType};

use crate::wire::{
    ERROR_FIELDS, ERROR_KIND, ERROR_NUMBERS, ERROR_OFFSET, ERROR_TENSOR_INDEX, ERROR_TENSOR_LEN,
    ERROR_TENSOR_START, STATUS,
};

/// A raw name's span in the header: start and length in bytes.
pub type Span = (u64, u64);

/// Declares [`LayerKind`] and [`LAYER_TABLE`] from one list: per kind its
/// doc, its numbers' names (all plain numbers) and its message template
/// (the core's template syntax: [`KindInfo::template`]).
macro_rules! layer_kinds {
    ($(
        $(#[doc = $doc:literal])*
        $kind:ident $({ $($field:ident),* })? => $template:literal;
    )*) => {
        /// The kinds of error this layer makes itself, numbered after the
        /// core's kinds.
        ///
        /// ```
        /// use safetensors_nano_wasm::{LayerKind, LAYER_TABLE};
        /// assert_eq!(LAYER_TABLE[LayerKind::DimensionTooLarge as usize].name, "DimensionTooLarge");
        /// ```
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[repr(u8)]
        // (The reader's and the writer's module each make only some of
        // them; the numbering is shared.)
        #[cfg_attr(not(all(feature = "reader", feature = "writer")), allow(dead_code))]
        pub enum LayerKind {
            $($(#[doc = $doc])* $kind,)*
        }

        /// This layer's rows of the kind table, in [`LayerKind`] order.
        ///
        /// ```
        /// use safetensors_nano_wasm::LAYER_TABLE;
        /// assert_eq!(LAYER_TABLE[2].name, "InvalidArgument");
        /// ```
        pub const LAYER_TABLE: &[KindInfo] = &[$(
            KindInfo {
                name: stringify!($kind),
                fields: &[$($(WireField { name: stringify!($field), ty: WireType::Number },)*)?],
                template: $template,
            },
        )*];
    };
}

layer_kinds! {
    /// A tensor's data ends in the file above 2^53, where JS numbers stop
    /// being exact.
    OffsetTooLarge { end }
        => "tensor ends at file byte {end}, above 2^53 where JS numbers stop being exact";
    /// A dimension is above 2^53.
    DimensionTooLarge { dim }
        => "dimension {dim} is above 2^53, where JS numbers stop being exact";
    /// The numbers or the text of a write plan are malformed (JS checks
    /// what it sends: a bug if it happens).
    InvalidArgument
        => "malformed write plan";
}

/// A kind of error that the package's JavaScript raises itself, with no
/// wasm call: its name and when it happens. They are listed here, beside
/// the kinds wasm numbers, so that the generated tables, the TypeScript
/// `ErrorKind` type and the README's list name every kind the package can
/// throw, from this one place.
///
/// ```
/// use safetensors_nano_wasm::JS_KINDS;
/// assert!(JS_KINDS.iter().any(|k| k.name == "Http"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JsKind {
    /// The kind's name (`e.kind` in JS).
    pub name: &'static str,
    /// When the package raises it.
    pub when: &'static str,
}

/// The kinds the package's JavaScript raises itself.
///
/// ```
/// use safetensors_nano_wasm::{kinds, JS_KINDS};
/// // No name is both a wasm kind and a JS kind.
/// assert!(JS_KINDS.iter().all(|j| kinds().all(|k| k.name != j.name)));
/// ```
pub const JS_KINDS: &[JsKind] = &[
    JsKind {
        name: "NotInMemory",
        when: "`bytes()`, `view()` or `toFloat32()` on a file read lazily (use `read()` or `readFloat32()`)",
    },
    JsKind {
        name: "NoSource",
        when: "a data read on a file opened from its header bytes alone (`fromHeader`)",
    },
    JsKind {
        name: "HeaderIncomplete",
        when: "`fromHeader` was given fewer bytes than the length prefix and header need",
    },
    JsKind {
        name: "SourceChanged",
        when: "the file or URL changed since it was opened (another ETag, `Last-Modified` or size, a whole new body, a `File` edited on disk): open it again; no bytes of the other version are returned",
    },
    JsKind {
        name: "Http",
        when: "the server answered with an error status (after the retries, for 5xx, 408 and 429), or more bytes than asked for",
    },
    JsKind {
        name: "Timeout",
        when: "an HTTP request made too little progress for `timeout` ms (no answer, a stalled or trickling body), after its retries: raise `timeout` for a slow link, or try later",
    },
    JsKind {
        name: "Network",
        when: "an HTTP request failed before an answer (refused, reset, DNS; in browsers also CORS and redirect loops, which their fetch does not tell apart), after its retries: check the URL and the connection",
    },
    JsKind {
        name: "TooManyRedirects",
        when: "the URL redirects in a loop or too many times (where fetch says so, as Node's does): fix the link or the server",
    },
    JsKind {
        name: "ShortBody",
        when: "an HTTP answer ended before the bytes it promised (a connection closed early, a `Content-Length` that disagrees with the body), after its retries",
    },
    JsKind {
        name: "RangeMismatch",
        when: "the server answered a Range request with other bytes than asked (a missing or wrong `Content-Range`, a 416 inside the file): a server or proxy that mishandles ranges",
    },
    JsKind {
        name: "RangeUnsupported",
        when: "the server ignores Range requests (it answers 200 with the whole file) and the file is over the 64 MiB kept in memory: a read with `noRange: 'reject'`, or a file whose length the server does not say; serve it from a server that answers ranges with 206, or use `noRange: 'stream'`",
    },
    JsKind {
        name: "ContentEncoded",
        when: "the server compressed a Range answer (`Content-Encoding`), so its bytes are not the file's: serve ranges unencoded",
    },
    JsKind {
        name: "IndexInvalid",
        when: "a sharded model's index is not JSON, has no `weight_map`, or names a shard badly",
    },
    JsKind {
        name: "IndexTooLarge",
        when: "a sharded model's index is over `indexLimit` bytes (default 256 MiB) or its `weight_map` over `indexEntryLimit` entries (default 2,000,000), found as it is read (the rest is not downloaded): pass a larger limit to open it",
    },
    JsKind {
        name: "IndexMismatch",
        when: "a sharded model's index and its shards disagree (tensor placement, shard names, `total_size`)",
    },
    JsKind {
        name: "ShardMissing",
        when: "a shard the index names was not given",
    },
    JsKind {
        name: "HubUnauthorized",
        when: "`openHub`: the Hub refused the repository (401/403): it is gated or private; pass a `token` of an account that has access (accept the model's terms on its page first)",
    },
    JsKind {
        name: "HubNotFound",
        when: "`openHub`: the Hub has no such repository, revision or file (404); the message names the files tried: check the name, or pass `file`",
    },
    JsKind {
        name: "WriterUnavailable",
        when: "the writer's wasm module could not be loaded (`serialize`)",
    },
    JsKind {
        name: "GpuLimitExceeded",
        when: "`safetensors-nano/webgpu`: a tensor's buffer is larger than the device's `maxBufferSize` or (with STORAGE usage) `maxStorageBufferBindingSize`, or the device could not allocate it",
    },
    JsKind {
        name: "GpuFeatureMissing",
        when: "`safetensors-nano/webgpu`: `as: 'f16'` on a device created without the `shader-f16` feature",
    },
    JsKind {
        name: "WriteFailed",
        when: "Node's `writeFile` could not write, sync or rename its file (a full disk, a file size limit, no permission); nothing is left behind",
    },
    JsKind {
        name: "Internal",
        when: "a failure inside the package rather than in the input: a wasm trap (the module is made anew for the next call), memory that could not be allocated, an engine's own error; `cause` holds the original",
    },
    JsKind {
        name: "ReaderUnavailable",
        when: "the reader's wasm module is not loaded: its default load failed (a bundler that does not copy the `.wasm`) and no `init` succeeded, or `init` failed",
    },
];

impl LayerKind {
    /// The kind's wire number: after every core kind's.
    ///
    /// ```
    /// use safetensors_nano::ErrorKind;
    /// use safetensors_nano_wasm::LayerKind;
    /// assert_eq!(LayerKind::OffsetTooLarge.code(), ErrorKind::COUNT);
    /// ```
    pub const fn code(self) -> u8 {
        ErrorKind::COUNT.saturating_add(self as u8)
    }
}

/// Every kind that crosses to JS, by wire number: the core's, then this
/// layer's.
///
/// ```
/// use safetensors_nano::ErrorKind;
/// use safetensors_nano_wasm::{kinds, LayerKind};
/// assert_eq!(kinds().nth(ErrorKind::Sink.code().into()).unwrap().name, "Sink");
/// let code = LayerKind::OffsetTooLarge.code();
/// assert_eq!(kinds().nth(code.into()).unwrap().name, "OffsetTooLarge");
/// ```
pub fn kinds() -> impl Iterator<Item = &'static KindInfo> {
    ErrorKind::TABLE.iter().chain(LAYER_TABLE)
}

/// An error to describe: a kind, up to three numbers, and where.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Failure {
    /// The kind's wire number.
    pub kind: u8,
    /// The kind's numbers, in its table row's order.
    pub fields: [u64; 3],
    /// Header byte offset.
    pub offset: Option<u64>,
    /// The tensor's raw name in the header.
    pub tensor: Option<Span>,
    /// The tensor's index in the caller's list.
    pub index: Option<u32>,
}

impl Failure {
    /// An error of this layer, about no place in particular.
    pub const fn new(kind: LayerKind, fields: [u64; 3]) -> Failure {
        Failure {
            kind: kind.code(),
            fields,
            offset: None,
            tensor: None,
            index: None,
        }
    }

    /// The same error, about the tensor whose raw name is this span.
    #[cfg(any(feature = "reader", test))]
    pub const fn with_tensor(mut self, span: Span) -> Failure {
        self.tensor = Some(span);
        self
    }

    /// The numbers that cross to JS.
    pub fn encode(&self) -> Vec<f64> {
        let mut out = Vec::with_capacity(ERROR_NUMBERS);
        let (start, len) = self
            .tensor
            .map_or((-1.0, 0.0), |(s, l)| (s as f64, l as f64));
        out.extend_from_slice(&[
            -1.0,
            self.offset.map_or(-1.0, |o| o as f64),
            start,
            len,
            self.index.map_or(-1.0, f64::from),
        ]);
        for v in self.fields {
            out.push((v >> 32) as f64);
            out.push((v & 0xFFFF_FFFF) as f64);
        }
        out.push(f64::from(self.kind));
        out
    }
}

// `encode` writes the numbers in this order.
const _: () = assert!(
    STATUS == 0
        && ERROR_OFFSET == 1
        && ERROR_TENSOR_START == 2
        && ERROR_TENSOR_LEN == 3
        && ERROR_TENSOR_INDEX == 4
        && ERROR_FIELDS == 5
        && ERROR_KIND == ERROR_FIELDS + 6
        && ERROR_NUMBERS == ERROR_KIND + 1
);

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        let kind = e.kind();
        let (tensor, index) = match e.tensor() {
            Some(TensorRef::Header { start, len }) => {
                (Some((u64::from(start), u64::from(len))), None)
            }
            Some(TensorRef::Index(i)) => (None, Some(i)),
            None => (None, None),
        };
        Failure {
            kind: kind.code(),
            fields: kind.fields(),
            offset: e.offset(),
            tensor,
            index,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use safetensors_nano::Expected;

    #[test]
    fn encodes_kind_fields_and_place() {
        let f = Failure::from(Error::new(ErrorKind::UnexpectedByte {
            found: b'x',
            expected: Expected::Colon,
        }));
        let n = f.encode();
        assert_eq!(&n[..5], [-1.0, -1.0, -1.0, 0.0, -1.0]);
        assert_eq!(&n[5..11], [0.0, 120.0, 0.0, 4.0, 0.0, 0.0]);
        assert_eq!(kind_name(&n), "UnexpectedByte");
        assert_eq!(n.len(), ERROR_NUMBERS);
    }

    #[test]
    fn large_fields_are_split_exactly() {
        let f =
            Failure::new(LayerKind::InvalidArgument, [u64::MAX, 1 << 53, 3]).with_tensor((7, 2));
        let n = f.encode();
        assert_eq!(&n[2..4], [7.0, 2.0]);
        assert_eq!(
            &n[5..11],
            [4294967295.0, 4294967295.0, 2097152.0, 0.0, 0.0, 3.0]
        );
    }

    /// The kind name an error's numbers carry, as JS reads it.
    pub fn kind_name(n: &[f64]) -> &'static str {
        assert_eq!(n[STATUS], -1.0, "not an error: {n:?}");
        assert_eq!(n.len(), ERROR_NUMBERS, "{n:?}");
        kinds().nth(n[ERROR_KIND] as usize).expect("a kind").name
    }

    /// A kind's number names it: the core's by their code, this layer's
    /// after them, in declaration order.
    #[test]
    fn kind_numbers_name_the_kinds() {
        for kind in [
            ErrorKind::InvalidUtf8,
            ErrorKind::Sink,
            ErrorKind::UnknownDtype,
            ErrorKind::HeaderTooSmall { len: 3 },
            ErrorKind::InvalidOffset {
                expected_begin: 1,
                begin: 2,
                end: 3,
            },
            ErrorKind::MissingField {
                field: safetensors_nano::Field::Shape,
            },
        ] {
            let n = Failure::from(Error::new(kind)).encode();
            assert_eq!(kind_name(&n), kind.name());
            assert_eq!(n[ERROR_FIELDS + 1], kind.fields()[0] as f64);
        }
        for (kind, name) in [
            (LayerKind::OffsetTooLarge, "OffsetTooLarge"),
            (LayerKind::DimensionTooLarge, "DimensionTooLarge"),
            (LayerKind::InvalidArgument, "InvalidArgument"),
        ] {
            assert_eq!(kind_name(&Failure::new(kind, [0; 3]).encode()), name);
            assert_eq!(std::format!("{kind:?}"), name);
        }
        assert_eq!(
            kinds().count(),
            usize::from(LayerKind::InvalidArgument.code()) + 1
        );
    }
}
