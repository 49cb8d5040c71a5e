//! Hub names, `hf://[datasets/|spaces/]org/name[@revision][/file]`, as
//! resolve URLs: `{endpoint}/{org}/{name}/resolve/{revision}/{file}`
//! (huggingface_hub's layout). The revision is percent-encoded as one path
//! segment, so `refs/pr/1` becomes `refs%2Fpr%2F1`.

use url::Url;

use super::{Error, Kind};

/// The file read when a name gives none: a sharded checkpoint's index,
/// else [`SINGLE`].
pub const INDEX: &str = "model.safetensors.index.json";
/// The file read when a name gives none and the repository has no index.
pub const SINGLE: &str = "model.safetensors";

/// A parsed `hf://` name.
#[derive(Debug, PartialEq, Eq)]
pub struct Name {
    /// `datasets/` or `spaces/` before the repository, or empty.
    pub kind_prefix: &'static str,
    /// `org/name`.
    pub repo: String,
    /// The revision (branch, tag, commit or `refs/pr/N`).
    pub revision: String,
    /// The file in the repository, if named (may be in a subfolder).
    pub file: Option<String>,
}

fn invalid(why: &str) -> Error {
    Error::new(
        Kind::InvalidUrl,
        format!("{why}; write hf://org/name[@revision][/path/to/file]"),
    )
}

/// Revisions that hold a `/` unencoded: the Hub's special refs.
fn special_ref(rest: &str) -> Option<usize> {
    let mut parts = rest.splitn(4, '/');
    let (refs, group, id) = (parts.next()?, parts.next()?, parts.next()?);
    let is_special = refs == "refs"
        && ((group == "pr" && !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()))
            || (group == "convert" && !id.is_empty()));
    is_special.then(|| refs.len() + group.len() + id.len() + 2)
}

/// Parses `hf://…`.
///
/// # Errors
/// [`Kind::InvalidUrl`]: no `org/name`, an empty revision or file segment.
pub fn parse(spec: &str) -> Result<Name, Error> {
    let rest = spec
        .strip_prefix("hf://")
        .ok_or_else(|| invalid("not an hf:// name"))?;
    let (kind_prefix, rest) = if let Some(r) = rest.strip_prefix("datasets/") {
        ("datasets/", r)
    } else if let Some(r) = rest.strip_prefix("spaces/") {
        ("spaces/", r)
    } else {
        ("", rest)
    };
    let (org, rest) = rest
        .split_once('/')
        .ok_or_else(|| invalid("no repository name"))?;
    let name_end = rest.find(['@', '/']).unwrap_or(rest.len());
    let (name, rest) = rest.split_at(name_end);
    if org.is_empty() || name.is_empty() {
        return Err(invalid("no repository name"));
    }
    let (revision, rest) = match rest.strip_prefix('@') {
        Some(after) => {
            let end = special_ref(after).unwrap_or_else(|| after.find('/').unwrap_or(after.len()));
            let (rev, rest) = after.split_at(end);
            let rev = percent_decode(rev).ok_or_else(|| invalid("a bad %-escape"))?;
            if rev.is_empty() {
                return Err(invalid("an empty revision after @"));
            }
            (rev, rest)
        }
        None => ("main".to_owned(), rest),
    };
    let file = match rest.strip_prefix('/') {
        None | Some("") => None,
        Some(file) => {
            if file
                .split('/')
                .any(|s| s.is_empty() || s == "." || s == "..")
            {
                return Err(invalid("an empty, `.` or `..` segment in the file path"));
            }
            Some(file.to_owned())
        }
    };
    Ok(Name {
        kind_prefix,
        repo: format!("{org}/{name}"),
        revision,
        file,
    })
}

/// `%XX` escapes decoded (a revision may be given as `refs%2Fpr%2F1`).
fn percent_decode(s: &str) -> Option<String> {
    let mut out = Vec::with_capacity(s.len());
    let mut bytes = s.bytes();
    while let Some(b) = bytes.next() {
        if b == b'%' {
            let hex = [bytes.next()?, bytes.next()?];
            out.push(u8::from_str_radix(std::str::from_utf8(&hex).ok()?, 16).ok()?);
        } else {
            out.push(b);
        }
    }
    String::from_utf8(out).ok()
}

impl Name {
    /// The resolve URL of `file` in this repository at this revision.
    ///
    /// # Errors
    /// [`Kind::InvalidUrl`] if `endpoint` cannot have a path.
    pub fn url(&self, endpoint: &Url, file: &str) -> Result<Url, Error> {
        let mut url = endpoint.clone();
        {
            let mut path = url.path_segments_mut().map_err(|()| {
                Error::new(
                    Kind::InvalidUrl,
                    format!("{endpoint} cannot be a Hub endpoint"),
                )
            })?;
            path.pop_if_empty();
            path.extend(self.kind_prefix.split('/').filter(|s| !s.is_empty()));
            path.extend(self.repo.split('/'));
            path.push("resolve");
            // One segment: `/` in it is escaped.
            path.push(&self.revision);
            path.extend(file.split('/'));
        }
        Ok(url)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(repo: &str, revision: &str, file: Option<&str>) -> Name {
        Name {
            kind_prefix: "",
            repo: repo.into(),
            revision: revision.into(),
            file: file.map(Into::into),
        }
    }

    #[test]
    fn names_parse_as_huggingface_hub_writes_them() {
        assert_eq!(parse("hf://org/m").unwrap(), name("org/m", "main", None));
        assert_eq!(parse("hf://org/m/").unwrap(), name("org/m", "main", None));
        assert_eq!(
            parse("hf://org/m@v1.0/unet/x.safetensors").unwrap(),
            name("org/m", "v1.0", Some("unet/x.safetensors"))
        );
        assert_eq!(
            parse("hf://org/m@refs/pr/12/a.safetensors").unwrap(),
            name("org/m", "refs/pr/12", Some("a.safetensors"))
        );
        assert_eq!(
            parse("hf://org/m@refs%2Fpr%2F3").unwrap(),
            name("org/m", "refs/pr/3", None)
        );
        assert_eq!(
            parse("hf://datasets/org/d").unwrap().kind_prefix,
            "datasets/"
        );
        for bad in [
            "hf://m",
            "hf://org/",
            "hf://org/m@",
            "hf://org/m/a//b",
            "hf://org/m/../x",
            "hf://o/m@%zz",
        ] {
            assert_eq!(parse(bad).unwrap_err().kind, Kind::InvalidUrl, "{bad}");
        }
    }

    #[test]
    fn urls_follow_the_resolve_layout() {
        let endpoint = Url::parse("https://hub.example/mirror/").unwrap();
        let n = parse("hf://org/m@refs/pr/1").unwrap();
        assert_eq!(
            n.url(&endpoint, "unet/a b.safetensors").unwrap().as_str(),
            "https://hub.example/mirror/org/m/resolve/refs%2Fpr%2F1/unet/a%20b.safetensors"
        );
    }
}
