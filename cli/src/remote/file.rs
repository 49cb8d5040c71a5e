//! A remote file read by HTTP ranges: a speculative prefix first (most
//! headers fit), then the rest of the header by one more range, and tensor
//! data streamed from an open-ended range only when asked for. Every
//! answer is checked against the first one (ETag, Last-Modified, size,
//! with `If-Range` on each request), so a file replaced meanwhile is a
//! [`Kind::SourceChanged`] error, never other bytes.
//!
//! A server that ignores `Range` (200 with the whole body) gives the header
//! from the start of its body; the body is then dropped with its
//! connection, never read to its end for a header. Data is then streamed
//! from a new whole-body answer, skipping to the bytes wanted.
//!
//! An answer that breaks off (a reset, a stall, an early end) is asked for
//! again from the byte where it stopped, as the client tries a failed
//! request again: [`RETRIES`] times in a row at most.

use std::io::{self, Read, Seek, SeekFrom};

use ureq::BodyReader;
use url::Url;

use super::client::{client, retry_delay, status_error, Answer, RETRIES};
use super::{Error, Kind};

/// The first request's length: most headers fit, and it costs one round
/// trip whatever the size.
pub const PREFIX: u64 = 256 << 10;

/// A gap in the data smaller than this is read through and dropped rather
/// than asked for with a new request.
const SKIP: u64 = 1 << 20;

/// A remote file, pinned to the version its first answer described.
pub struct RemoteFile {
    /// The URL asked for (asked again if a redirect's signed URL expires).
    url: Url,
    /// The URL that answered (after redirects): later requests go there.
    at: Url,
    size: u64,
    etag: Option<String>,
    last_modified: Option<String>,
    /// Whether the server answers ranges.
    ranges: bool,
    /// The file's first bytes.
    head: Vec<u8>,
    pos: u64,
    /// An answer's body being read, and the file offset of its next byte.
    body: Option<(BodyReader<'static>, u64)>,
}

fn content_range(value: Option<&str>) -> Option<(u64, u64, u64)> {
    let rest = value?.trim().strip_prefix("bytes ")?;
    let (range, total) = rest.split_once('/')?;
    let (start, end) = range.split_once('-')?;
    Some((
        start.trim().parse().ok()?,
        end.trim().parse().ok()?,
        total.trim().parse().ok()?,
    ))
}

/// Reads up to `want` bytes of `body` into `out`; fewer only at its end.
fn fill(body: &mut impl Read, out: &mut Vec<u8>, want: u64) -> io::Result<()> {
    body.take(want).read_to_end(out).map(|_| ())
}

impl RemoteFile {
    /// Opens `url` with one request for its first [`PREFIX`] bytes (asked
    /// for again, [`RETRIES`] times at most, when their answer breaks off).
    /// `tried` are the URLs asked for before this one (named by a 404).
    ///
    /// # Errors
    /// The request failed, the answer is an error or not the bytes asked for.
    pub fn open(url: &Url, tried: &[String]) -> Result<Self, Error> {
        let mut retry = 0;
        loop {
            match Self::open_once(url, tried)? {
                Ok(file) => return Ok(file),
                Err(broken) if retry == RETRIES => return Err(broken.after_tries(RETRIES + 1)),
                Err(_) => {}
            }
            std::thread::sleep(retry_delay(retry));
            retry += 1;
        }
    }

    /// One try of [`RemoteFile::open`]: the file, or (inside) the error of
    /// an answer that broke off, which another try may not meet.
    fn open_once(url: &Url, tried: &[String]) -> Result<Result<Self, Error>, Error> {
        let range = format!("bytes=0-{}", PREFIX - 1);
        let answer = client().get(url, &[("Range", &range)])?;
        let mut file = RemoteFile {
            url: url.clone(),
            at: answer.url.clone(),
            size: 0,
            etag: answer.header("ETag").map(str::to_owned),
            last_modified: answer.header("Last-Modified").map(str::to_owned),
            ranges: true,
            head: Vec::new(),
            pos: 0,
            body: None,
        };
        match answer.status().as_u16() {
            206 => {
                file.refuse_encoded(&answer)?;
                let Some((0, end, total)) = content_range(answer.header("Content-Range"))
                    .filter(|&(s, e, t)| s <= e && e < t && e < PREFIX)
                else {
                    return Err(file.mismatch(&answer, 0, PREFIX - 1));
                };
                file.size = total;
                let mut body = answer.response.into_body().into_reader();
                if let Err(e) = fill(&mut body, &mut file.head, end + 1) {
                    return Ok(Err(file.read_error(&e)));
                }
                if file.head.len() as u64 != end + 1 {
                    return Ok(Err(file.changed(format!(
                        "its answer ended after {} of bytes 0-{end}",
                        file.head.len()
                    ))));
                }
            }
            200 => {
                file.refuse_encoded(&answer)?;
                file.ranges = false;
                file.size = file.whole_length(&answer)?;
                let mut body = answer.response.into_body().into_reader();
                if let Err(e) = fill(&mut body, &mut file.head, PREFIX.min(file.size)) {
                    return Ok(Err(file.read_error(&e)));
                }
                file.body = Some((body, file.head.len() as u64));
            }
            // An empty file has no byte 0.
            416 => match content_range_total(answer.header("Content-Range")) {
                Some(0) => {}
                _ => return Err(file.mismatch(&answer, 0, PREFIX - 1)),
            },
            _ => {
                let mut tried = tried.to_vec();
                tried.push(url.to_string());
                return Err(status_error(&answer, &tried));
            }
        }
        Ok(Ok(file))
    }

    /// The file's length in bytes.
    pub fn len(&self) -> u64 {
        self.size
    }

    /// The first bytes held so far (at least the first 8 of any file
    /// that long).
    pub fn head(&self) -> &[u8] {
        &self.head
    }

    /// Drops the answer being read, and its connection.
    pub fn release_connection(&mut self) {
        self.body = None;
    }

    /// Holds the first `n` bytes (at most the whole file) in memory: the
    /// rest of a header larger than the first request, by one more range
    /// (or from the whole body a server without ranges sent). An answer
    /// that breaks off is asked for again from where it stopped.
    ///
    /// # Errors
    /// As reading.
    pub fn fetch_head(&mut self, n: u64) -> Result<(), Error> {
        let n = n.min(self.size);
        let mut retry = 0;
        loop {
            let have = self.head.len();
            let Some(broken) = self.fill_head(n)? else {
                return Ok(());
            };
            if self.head.len() > have {
                retry = 0;
            } else if retry == RETRIES {
                return Err(broken.after_tries(RETRIES + 1));
            } else {
                std::thread::sleep(retry_delay(retry));
                retry += 1;
            }
        }
    }

    /// One try of [`RemoteFile::fetch_head`], from the open body when it is
    /// at the first byte not held, else from a new answer: None once the
    /// first `n` bytes are held, else the error of the answer that broke
    /// off (the next try asks again).
    fn fill_head(&mut self, n: u64) -> Result<Option<Error>, Error> {
        let have = self.head.len() as u64;
        if have >= n {
            return Ok(None);
        }
        let (mut body, at) = match self.body.take() {
            Some((body, at)) if at == have => (body, at),
            _ => {
                let range = format!("bytes={have}-{}", n - 1);
                // (Without ranges the body starts at byte 0, and `request`
                // skipped to `have`.)
                (self.request(have, &range)?, have)
            }
        };
        let got = fill(&mut body, &mut self.head, n - have);
        let filled = self.head.len() as u64;
        if let Err(e) = got {
            return Ok(Some(self.read_error(&e)));
        }
        if filled < n {
            return Ok(Some(self.changed(format!(
                "it ended at byte {filled}, before byte {n} of its {} bytes",
                self.size
            ))));
        }
        // (A range answer is used up; a whole body goes on to the data.)
        if !self.ranges {
            self.body = Some((body, at + (filled - have)));
        }
        Ok(None)
    }

    /// Asks for the bytes from `start` (a range `range`, with `If-Range`):
    /// the body, positioned at `start`.
    fn request(&mut self, start: u64, range: &str) -> Result<BodyReader<'static>, Error> {
        let pin = self
            .etag
            .as_deref()
            .filter(|e| !e.starts_with("W/"))
            .or(self.last_modified.as_deref())
            .map(str::to_owned);
        let mut headers = Vec::new();
        if self.ranges {
            headers.push(("Range", range));
            if let Some(pin) = &pin {
                headers.push(("If-Range", pin.as_str()));
            }
        }
        let mut answer = client().get(&self.at, &headers)?;
        // A redirect's signed URL may have expired: ask the URL we were given again.
        if matches!(answer.status().as_u16(), 401 | 403) && self.at != self.url {
            answer = client().get(&self.url, &headers)?;
            self.at = answer.url.clone();
        }
        let status = answer.status().as_u16();
        if matches!(status, 200 | 206) {
            self.refuse_encoded(&answer)?;
            self.check_validators(&answer)?;
        }
        match status {
            206 if self.ranges => {
                let expected_end = range
                    .rsplit_once('-')
                    .and_then(|(_, e)| e.parse::<u64>().ok())
                    .unwrap_or(self.size - 1);
                match content_range(answer.header("Content-Range")) {
                    Some((s, e, total))
                        if s == start && e == expected_end && total == self.size =>
                    {
                        Ok(answer.response.into_body().into_reader())
                    }
                    Some((_, _, total)) if total != self.size => {
                        Err(self.changed(format!("it is now {total} bytes, was {}", self.size)))
                    }
                    _ => Err(self.mismatch(&answer, start, expected_end)),
                }
            }
            200 if self.ranges && pin.is_some() => Err(self.changed(
                "the server sent the whole file to a request pinned with If-Range".to_owned(),
            )),
            200 => {
                // A server without ranges (or that stopped doing them): the
                // same file only if its length and first bytes are the same.
                let length = self.whole_length(&answer)?;
                if length != self.size {
                    return Err(
                        self.changed(format!("it is now {length} bytes, was {}", self.size))
                    );
                }
                self.ranges = false;
                let mut body = answer.response.into_body().into_reader();
                let mut first = Vec::with_capacity(self.head.len());
                fill(&mut body, &mut first, self.head.len() as u64)
                    .map_err(|e| self.read_error(&e))?;
                if first != self.head {
                    return Err(self.changed("its first bytes differ".to_owned()));
                }
                let skip = start - self.head.len() as u64;
                let skipped = io::copy(&mut (&mut body).take(skip), &mut io::sink())
                    .map_err(|e| self.read_error(&e))?;
                if skipped != skip {
                    return Err(self.changed(format!("it ended before byte {start}")));
                }
                Ok(body)
            }
            412 => Err(self.changed("412 Precondition Failed".to_owned())),
            _ => Err(status_error(&answer, &[self.url.to_string()])),
        }
    }

    fn whole_length(&self, answer: &Answer) -> Result<u64, Error> {
        answer
            .header("Content-Length")
            .and_then(|l| l.trim().parse().ok())
            .ok_or_else(|| {
                Error::new(
                    Kind::RangeMismatch,
                    "the server ignores Range requests and gives no Content-Length, so the file's length is unknown; \
                     serve it from a server that answers ranges, or download it",
                )
            })
    }

    fn check_validators(&self, answer: &Answer) -> Result<(), Error> {
        let differs = |was: &Option<String>, name: &str| match (was, answer.header(name)) {
            (Some(was), Some(now)) if was != now => Some(format!("{name} {was}, now {now}")),
            _ => None,
        };
        match differs(&self.etag, "ETag").or_else(|| differs(&self.last_modified, "Last-Modified"))
        {
            Some(what) => Err(self.changed(what)),
            None => Ok(()),
        }
    }

    fn refuse_encoded(&self, answer: &Answer) -> Result<(), Error> {
        match answer.header("Content-Encoding") {
            Some(e) if !e.eq_ignore_ascii_case("identity") => Err(Error::new(
                Kind::ContentEncoded,
                format!(
                    "the server sent the bytes with Content-Encoding {e}, not as they are in the file; \
                     serve .safetensors files without compression"
                ),
            )),
            _ => Ok(()),
        }
    }

    fn changed(&self, what: String) -> Error {
        Error::new(
            Kind::SourceChanged,
            format!("the file changed since it was opened ({what}); run the command again"),
        )
    }

    fn mismatch(&self, answer: &Answer, start: u64, end: u64) -> Error {
        Error::new(
            Kind::RangeMismatch,
            format!(
                "asked for bytes {start}-{end}, the answer (HTTP {}) has Content-Range {:?}",
                answer.status(),
                answer.header("Content-Range").unwrap_or("(none)")
            ),
        )
    }

    fn read_error(&self, e: &io::Error) -> Error {
        match super::inside(e) {
            Some(inner) => Error::new(inner.kind, inner.message.clone()),
            None => Error::new(
                Kind::Network,
                format!(
                    "{}: the answer broke off ({e}); check the connection, then run the command again",
                    self.at
                ),
            ),
        }
    }

    /// The body positioned at `self.pos`: the open one (read through a
    /// small gap), else a new request.
    fn body_at_pos(&mut self) -> Result<&mut BodyReader<'static>, Error> {
        let pos = self.pos;
        let reuse = match &self.body {
            Some((_, at)) => *at <= pos && (pos - *at <= SKIP || !self.ranges),
            None => false,
        };
        if reuse {
            if let Some((body, at)) = &mut self.body {
                let gap = pos - *at;
                let skipped = io::copy(&mut (&mut *body).take(gap), &mut io::sink());
                *at += skipped.as_ref().copied().unwrap_or(0);
                match skipped {
                    Ok(n) if n == gap => {}
                    Ok(_) => {
                        let at = *at;
                        return Err(self.changed(format!("it ended at byte {at}")));
                    }
                    Err(e) => return Err(self.read_error(&e)),
                }
            }
        } else {
            self.body = None;
            let range = format!("bytes={pos}-{}", self.size - 1);
            let body = self.request(pos, &range)?;
            self.body = Some((body, pos));
        }
        match &mut self.body {
            Some((body, _)) => Ok(body),
            None => Err(Error::new(Kind::Network, "no body")),
        }
    }
}

fn content_range_total(value: Option<&str>) -> Option<u64> {
    value?.trim().strip_prefix("bytes */")?.trim().parse().ok()
}

impl Read for RemoteFile {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if let Some(held) = usize::try_from(self.pos)
            .ok()
            .and_then(|p| self.head.get(p..))
            .filter(|h| !h.is_empty())
        {
            let n = held.len().min(buf.len());
            buf[..n].copy_from_slice(&held[..n]);
            self.pos += n as u64;
            return Ok(n);
        }
        if self.pos >= self.size || buf.is_empty() {
            return Ok(0);
        }
        let want = usize::try_from(self.size - self.pos).map_or(buf.len(), |l| l.min(buf.len()));
        // A body that breaks (a reset, a stall, an early end) is asked for
        // again from where it stopped, pinned to the version opened (a
        // changed file is then SourceChanged), RETRIES times in a row at most.
        let mut retry = 0;
        loop {
            let body = self.body_at_pos()?;
            let failure = match body.read(&mut buf[..want]) {
                Ok(0) => self.changed(format!(
                    "it ended at byte {}, before byte {}",
                    self.pos, self.size
                )),
                Ok(n) => {
                    self.pos += n as u64;
                    if let Some((_, at)) = &mut self.body {
                        *at += n as u64;
                    }
                    return Ok(n);
                }
                Err(e) => self.read_error(&e),
            };
            self.body = None;
            if retry == RETRIES {
                return Err(failure.after_tries(RETRIES + 1).into());
            }
            std::thread::sleep(retry_delay(retry));
            retry += 1;
        }
    }
}

impl Seek for RemoteFile {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let pos = match to {
            SeekFrom::Start(p) => Some(p),
            SeekFrom::End(d) => self.size.checked_add_signed(d),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        self.pos = pos.ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "seek before the start of the file",
            )
        })?;
        Ok(self.pos)
    }
}
