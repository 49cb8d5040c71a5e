//! The table of the core's error kinds, as the npm package's generated JS
//! needs it (`cargo xtask gen`): per kind its name, the numbers it carries
//! and its message template. It is built from the core's own list
//! (`core/src/error/kinds.rs`, included here), so a kind added there is a
//! row here; it is not linked into the `.wasm` (only `xtask` reads it).

use safetensors_nano::{Dtype, ErrorKind, Expected, Field};

/// What one number an error kind carries is, which decides how a message
/// shows it.
///
/// ```
/// assert_eq!(safetensors_nano_wasm::WireType::Dtype.name(), "dtype");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireType {
    /// An integer, shown in decimal (or as the template's format code says).
    Number,
    /// An [`Expected`], as its index in [`Expected::ALL`].
    Expected,
    /// A [`Field`], as its index in [`Field::ALL`].
    Field,
    /// A [`Dtype`], as its index in [`Dtype::ALL`].
    Dtype,
}

impl WireType {
    /// The type's name in lower case, as the generated tables spell it.
    ///
    /// ```
    /// assert_eq!(safetensors_nano_wasm::WireType::Expected.name(), "expected");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            WireType::Number => "number",
            WireType::Expected => "expected",
            WireType::Field => "field",
            WireType::Dtype => "dtype",
        }
    }
}

/// One number an error kind carries: the variant field's name and type.
///
/// ```
/// use safetensors_nano_wasm::{WireType, CORE_TABLE};
/// let f = CORE_TABLE[0].fields[0];
/// assert_eq!((f.name, f.ty), ("len", WireType::Number));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WireField {
    /// The variant field's name.
    pub name: &'static str,
    /// What it is.
    pub ty: WireType,
}

/// One row of the kind table: a kind's name, the numbers it carries and
/// its message template.
///
/// ```
/// use safetensors_nano::ErrorKind;
/// use safetensors_nano_wasm::CORE_TABLE;
/// let row = &CORE_TABLE[usize::from(ErrorKind::InvalidUtf8.code())];
/// assert_eq!((row.name, row.template), ("InvalidUtf8", "header is not valid UTF-8"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KindInfo {
    /// The kind's name.
    pub name: &'static str,
    /// The numbers the kind carries, in [`ErrorKind::fields`] order.
    pub fields: &'static [WireField],
    /// The message, with `{name}` where the field `name` goes (the core's
    /// `Display` renders the same templates): `{name:x}` in lower-case hex,
    /// `{name:02x}` in hex of at least two digits, `{name:or_more}` in
    /// decimal followed by `" or more"` when it is 3 or more.
    pub template: &'static str,
}

/// The [`WireType`] of a kind's field type.
trait Typed {
    const TYPE: WireType;
}

macro_rules! typed {
    ($($t:ty => $w:ident),*) => {
        $(impl Typed for $t {
            const TYPE: WireType = WireType::$w;
        })*
    };
}

typed!(u8 => Number, u32 => Number, u64 => Number, Expected => Expected, Field => Field, Dtype => Dtype);

/// Builds [`CORE_TABLE`] from the core's list of kinds (the same syntax
/// its own `error_kinds!` reads; docs and reference names are dropped).
macro_rules! error_kinds {
    ($(
        $(#[doc = $doc:literal])*
        $kind:ident $({
            $($(#[doc = $fdoc:literal])* $field:ident: $fty:ty),* $(,)?
        })?
        $(reference $reference:literal)?
        => $template:literal;
    )*) => {
        /// The core's kinds, indexed by [`ErrorKind::code`].
        ///
        /// ```
        /// use safetensors_nano::ErrorKind;
        /// use safetensors_nano_wasm::CORE_TABLE;
        /// assert_eq!(CORE_TABLE[usize::from(ErrorKind::Sink.code())].name, ErrorKind::Sink.name());
        /// ```
        pub const CORE_TABLE: &[KindInfo] = &[$(
            KindInfo {
                name: stringify!($kind),
                fields: &[$($(WireField { name: stringify!($field), ty: <$fty as Typed>::TYPE },)*)?],
                template: $template,
            },
        )*];
    };
}

include!("../../core/src/error/kinds.rs");

const _: () = assert!(
    CORE_TABLE.len() == ErrorKind::COUNT as usize,
    "a row per core kind"
);
