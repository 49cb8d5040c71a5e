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
    /// An HTTP error status (from a server other than the Hub's, any
    /// error; from the Hub, one other than 401, 403 and 404).
    Http,
    /// 401 or 403 from the Hub: a gated or private repository, and no
    /// token or one without access (the npm package's kind too).
    HubUnauthorized,
    /// 404 from the Hub: none of the files tried exists (the npm
    /// package's kind too).
    HubNotFound,
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
            Kind::HubUnauthorized => "HubUnauthorized",
            Kind::HubNotFound => "HubNotFound",
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

    /// This error, as the last of `tries` tries that each failed.
    pub fn after_tries(self, tries: u32) -> Self {
        Error {
            message: format!("{} (tried {tries} times)", self.message),
            ..self
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
