//! Files at `http(s)://` URLs and on the Hugging Face Hub (`hf://`): one
//! HTTP client for the whole run ([`client`]), Hub names resolved to URLs
//! ([`hub`]), and a file read by ranges, pinned to the version first seen
//! ([`file`](mod@file)).

pub mod client;
pub mod file;
pub mod hub;

use std::fmt;

/// What went wrong with a remote file; its name is the `kind` of
/// `--json` errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The argument is not a URL or Hub name we can read.
    InvalidUrl,
    /// No connection, a reset, a TLS failure.
    Network,
    /// The server did not answer in time.
    Timeout,
    /// An HTTP status we do not handle.
    Http,
    /// 401 or 403: a gated or private repository, or a missing token.
    Unauthorized,
    /// 404: none of the files tried exists.
    NotFound,
    /// More redirects than we follow.
    TooManyRedirects,
    /// The file changed since it was first opened.
    SourceChanged,
    /// The server answered other bytes than the ones asked for.
    RangeMismatch,
    /// The server compressed an answer (its bytes are not the file's).
    ContentEncoded,
}

impl Kind {
    /// The kind's name, as `--json` prints it.
    pub fn name(self) -> &'static str {
        match self {
            Kind::InvalidUrl => "InvalidUrl",
            Kind::Network => "Network",
            Kind::Timeout => "Timeout",
            Kind::Http => "Http",
            Kind::Unauthorized => "Unauthorized",
            Kind::NotFound => "NotFound",
            Kind::TooManyRedirects => "TooManyRedirects",
            Kind::SourceChanged => "SourceChanged",
            Kind::RangeMismatch => "RangeMismatch",
            Kind::ContentEncoded => "ContentEncoded",
        }
    }
}

/// A failure reading a remote file: its kind and a message that says
/// what happened, where, and what to do.
#[derive(Debug)]
pub struct Error {
    /// What went wrong.
    pub kind: Kind,
    /// The message.
    pub message: String,
}

impl Error {
    /// An error of `kind`.
    pub fn new(kind: Kind, message: impl Into<String>) -> Self {
        Error {
            kind,
            message: message.into(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

impl From<Error> for std::io::Error {
    fn from(e: Error) -> Self {
        std::io::Error::other(e)
    }
}

/// The remote error inside an I/O error (from [`file::RemoteFile`]'s
/// `Read`), if it is one.
pub fn inside(e: &std::io::Error) -> Option<&Error> {
    e.get_ref().and_then(|inner| inner.downcast_ref::<Error>())
}
