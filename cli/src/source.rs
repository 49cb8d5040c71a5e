//! Where a file named on the command line is: a path on disk, or (with the
//! `http` feature) an `http(s)://` URL or an `hf://` Hub name, and the
//! open file read from either.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use crate::file::Failure;

/// A file or index named on the command line, or a shard of an index.
pub enum Source {
    /// On disk.
    Path(PathBuf),
    /// At a URL.
    #[cfg(feature = "http")]
    Url(Remote),
}

/// A remote file.
#[cfg(feature = "http")]
pub struct Remote {
    /// Its URL.
    pub url: url::Url,
    /// How messages name it (the argument as given, or the shard's URL).
    pub shown: String,
    /// URLs tried before this one (a Hub name without a file tries the
    /// index first), named if this one is not found either.
    pub tried: Vec<String>,
    /// The index's bytes, when resolving the name already read them.
    pub body: Option<Vec<u8>>,
}

/// Whether `arg` names a remote file (`http://`, `https://`, `hf://`).
fn remote_scheme(arg: &str) -> bool {
    ["http://", "https://", "hf://"].iter().any(|s| {
        arg.get(..s.len())
            .is_some_and(|p| p.eq_ignore_ascii_case(s))
    })
}

impl Source {
    /// The file `arg` names: a URL or Hub name, else a path. A Hub name
    /// without a file is resolved here: its index, or `model.safetensors`
    /// when it has none (one request).
    ///
    /// # Errors
    /// An invalid URL or Hub name, a request that failed, a build without
    /// the `http` feature.
    pub fn from_arg(arg: &Path) -> Result<Source, Failure> {
        match arg.to_str() {
            Some(text) if remote_scheme(text) => remote(text),
            _ => Ok(Source::Path(arg.to_path_buf())),
        }
    }

    /// The path, for a file on disk.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Source::Path(p) => Some(p),
            #[cfg(feature = "http")]
            Source::Url(_) => None,
        }
    }

    /// Whether this is a sharded checkpoint's index (`….index.json`).
    pub fn is_index(&self) -> bool {
        let name = match self {
            Source::Path(p) => p.file_name().and_then(|n| n.to_str()),
            #[cfg(feature = "http")]
            Source::Url(r) => r.url.path_segments().and_then(|mut s| s.next_back()),
        };
        name.is_some_and(|n| n.ends_with(".index.json"))
    }

    /// How messages name it.
    pub fn shown(&self) -> String {
        match self {
            Source::Path(p) => p.display().to_string(),
            #[cfg(feature = "http")]
            Source::Url(r) => r.shown.clone(),
        }
    }

    /// The shard `name` of this index: beside it (in its folder, or
    /// relative to its URL).
    ///
    /// # Errors
    /// A remote shard name that is not a relative path (`..`, an absolute
    /// path or URL): it would leave the index's folder.
    pub fn shard(&self, name: &str) -> Result<Source, Failure> {
        match self {
            Source::Path(p) => {
                let dir = match p.parent() {
                    Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
                    _ => PathBuf::from("."),
                };
                Ok(Source::Path(dir.join(name)))
            }
            #[cfg(feature = "http")]
            Source::Url(r) => {
                let segments: Vec<&str> = name.split('/').collect();
                if name.contains('\\')
                    || segments
                        .iter()
                        .any(|s| s.is_empty() || *s == "." || *s == ".." || s.contains(':'))
                {
                    return Err(Failure::other(format!(
                        "shard {name:?}: not a relative path beside the index"
                    )));
                }
                let mut url = r.url.clone();
                if let Ok(mut path) = url.path_segments_mut() {
                    path.pop();
                    path.extend(segments);
                }
                Ok(Source::Url(Remote {
                    shown: url.to_string(),
                    url,
                    tried: Vec::new(),
                    body: None,
                }))
            }
        }
    }

    /// The file's first `limit` + 1 bytes at most (an index: the byte past
    /// `limit` tells the caller it is over).
    ///
    /// # Errors
    /// It cannot be read.
    pub fn read_prefix(&self, limit: u64) -> Result<Vec<u8>, Failure> {
        let mut bytes = Vec::new();
        match self {
            Source::Path(p) => {
                let file = File::open(p).map_err(|e| Failure::io("cannot open", &e))?;
                file.take(limit.saturating_add(1))
                    .read_to_end(&mut bytes)
                    .map_err(|e| Failure::io("cannot read", &e))?;
            }
            #[cfg(feature = "http")]
            Source::Url(r) => {
                bytes = match &r.body {
                    Some(body) => body.clone(),
                    None => fetch_small(&r.url, &r.tried, limit).map_err(Failure::remote)?,
                };
            }
        }
        Ok(bytes)
    }

    /// Opens the file: its reader and length.
    ///
    /// # Errors
    /// It cannot be opened.
    pub fn open(&self) -> Result<(Input, u64), Failure> {
        match self {
            Source::Path(p) => {
                let file = File::open(p).map_err(|e| Failure::io("cannot open", &e))?;
                let len = file
                    .metadata()
                    .map_err(|e| Failure::io("cannot stat", &e))?
                    .len();
                Ok((Input::File(file), len))
            }
            #[cfg(feature = "http")]
            Source::Url(r) => {
                let file = crate::remote::file::RemoteFile::open(&r.url, &r.tried)
                    .map_err(Failure::remote)?;
                let len = file.len();
                Ok((Input::Remote(Box::new(file)), len))
            }
        }
    }
}

#[cfg(not(feature = "http"))]
fn remote(_: &str) -> Result<Source, Failure> {
    let mut f = Failure::other(
        "this build of safetensors-nano reads local files only (built without the `http` feature); \
         download the file, or build with `cargo build -p safetensors-nano-cli` (default features)"
            .into(),
    );
    f.kind = Some("NoHttp");
    Err(f)
}

#[cfg(feature = "http")]
fn remote(text: &str) -> Result<Source, Failure> {
    use crate::remote::{client::client, hub, Error, Kind};
    let remote = |url: url::Url, tried: Vec<String>, body: Option<Vec<u8>>| {
        Source::Url(Remote {
            url,
            shown: text.to_owned(),
            tried,
            body,
        })
    };
    if !text
        .get(..5)
        .is_some_and(|p| p.eq_ignore_ascii_case("hf://"))
    {
        let url = url::Url::parse(text)
            .ok()
            .filter(|u| u.has_host())
            .ok_or_else(|| Failure::remote(Error::new(Kind::InvalidUrl, "not a valid URL")))?;
        return Ok(remote(url, Vec::new(), None));
    }
    let name = hub::parse(text).map_err(Failure::remote)?;
    let endpoint = client().endpoint().map_err(Failure::remote)?;
    if let Some(file) = &name.file {
        let url = name.url(endpoint, file).map_err(Failure::remote)?;
        return Ok(remote(url, Vec::new(), None));
    }
    let index = name.url(endpoint, hub::INDEX).map_err(Failure::remote)?;
    match fetch_small(&index, &[], crate::sharded::INDEX_LIMITS.bytes as u64) {
        Ok(body) => Ok(remote(index, Vec::new(), Some(body))),
        Err(e) if e.kind == Kind::HubNotFound => {
            let single = name.url(endpoint, hub::SINGLE).map_err(Failure::remote)?;
            Ok(remote(single, vec![index.to_string()], None))
        }
        Err(e) => Err(Failure::remote(e)),
    }
}

/// GETs a small file whole (at most `limit` + 1 bytes are read).
#[cfg(feature = "http")]
fn fetch_small(
    url: &url::Url,
    tried: &[String],
    limit: u64,
) -> Result<Vec<u8>, crate::remote::Error> {
    use crate::remote::{client, Error, Kind};
    let answer = client::client().get(url, &[])?;
    if answer.status() != 200 {
        let mut tried = tried.to_vec();
        tried.push(url.to_string());
        return Err(client::status_error(&answer, &tried));
    }
    let mut bytes = Vec::new();
    answer
        .response
        .into_body()
        .into_reader()
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| Error::new(Kind::Network, format!("{url}: {e}")))?;
    Ok(bytes)
}

/// An open file: on disk, or remote.
pub enum Input {
    /// On disk.
    File(File),
    /// Remote.
    #[cfg(feature = "http")]
    Remote(Box<crate::remote::file::RemoteFile>),
}

impl Input {
    /// Makes the header's bytes cheap to read: for a remote file, fetches
    /// the rest of a header larger than the first request, by one more
    /// range (nothing for a header over the limit: reading it fails first).
    ///
    /// # Errors
    /// The request failed.
    pub fn prefetch_header(&mut self) -> Result<(), Failure> {
        match self {
            Input::File(_) => Ok(()),
            #[cfg(feature = "http")]
            Input::Remote(r) => match safetensors_nano::Parser::new().bytes_needed(r.head()) {
                Ok(needed) => r.fetch_head(needed).map_err(Failure::remote),
                Err(_) => Ok(()),
            },
        }
    }
}

impl Input {
    /// Closes a remote file's connection, if a body is still open on it
    /// (a server without ranges): the next read asks again.
    #[cfg(feature = "http")]
    pub fn release_connection(&mut self) {
        if let Input::Remote(r) = self {
            r.release_connection();
        }
    }
}

impl Read for Input {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Input::File(f) => f.read(buf),
            #[cfg(feature = "http")]
            Input::Remote(r) => r.read(buf),
        }
    }
}

impl Seek for Input {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        match self {
            Input::File(f) => f.seek(to),
            #[cfg(feature = "http")]
            Input::Remote(r) => r.seek(to),
        }
    }
}
