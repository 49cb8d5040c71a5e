//! The HTTP client of a run: GET with the Hub token for the endpoint's
//! origin only, and redirects followed here (not by ureq) so that the
//! token never reaches another origin, such as the CDN the Hub redirects
//! file downloads to.

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

use ureq::http::{Response, StatusCode};
use ureq::Body;
use url::Url;

use super::{Error, Kind};

/// The Hub used when `HF_ENDPOINT` is not set.
pub const DEFAULT_ENDPOINT: &str = "https://huggingface.co";

/// Redirects followed for one request.
const MAX_REDIRECTS: usize = 10;

/// Further tries after a transient failure: a connection that failed or
/// timed out, or an answer that says to try again ([`says_try_again`]).
/// The npm package's default too.
pub const RETRIES: u32 = 2;

/// The wait before retry `i` (0-based): 200 ms, then twice as long each
/// time, as the npm package waits.
pub fn retry_delay(i: u32) -> Duration {
    Duration::from_millis(200u64 << i.min(10))
}

/// Whether an answer's status says "try again" (RFC 9110: a timeout,
/// overload, a gateway).
fn says_try_again(status: StatusCode) -> bool {
    matches!(status.as_u16(), 408 | 429 | 500 | 502 | 503 | 504)
}

/// The client, its Hub endpoint and token.
pub struct Client {
    agent: ureq::Agent,
    endpoint: Result<Url, String>,
    token: Option<String>,
}

static CLIENT: OnceLock<Client> = OnceLock::new();

/// Sets the token given on the command line (`--token`), before the first
/// request; without it the token is `HF_TOKEN`'s, else the one
/// `huggingface-cli login` saved.
pub fn configure(token: Option<String>) {
    let _ = CLIENT.set(Client::new(token.or_else(token_from_env)));
}

/// The client of this run.
pub fn client() -> &'static Client {
    CLIENT.get_or_init(|| Client::new(token_from_env()))
}

/// huggingface_hub's order: `HF_TOKEN`, then the file at `HF_TOKEN_PATH`,
/// else `$HF_HOME/token` (`HF_HOME` defaulting to
/// `$XDG_CACHE_HOME/huggingface`, then `~/.cache/huggingface`).
fn token_from_env() -> Option<String> {
    let set = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    if let Some(token) = set("HF_TOKEN") {
        return Some(token.trim().to_owned());
    }
    let path = set("HF_TOKEN_PATH").map(PathBuf::from).or_else(|| {
        let home = set("HF_HOME").map(PathBuf::from).or_else(|| {
            set("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .or_else(|| set("HOME").map(|h| PathBuf::from(h).join(".cache")))
                .map(|cache| cache.join("huggingface"))
        })?;
        Some(home.join("token"))
    })?;
    let token = std::fs::read_to_string(path).ok()?;
    Some(token.trim().to_owned()).filter(|t| !t.is_empty())
}

/// One answer, and the URL that gave it (after redirects).
pub struct Answer {
    /// The URL that answered.
    pub url: Url,
    /// The response; its body not read yet.
    pub response: Response<Body>,
    /// Whether the request that got it carried the token.
    pub token_sent: bool,
    /// How many tries it took (more than one after transient failures).
    pub tries: u32,
}

impl Answer {
    /// The status code.
    pub fn status(&self) -> StatusCode {
        self.response.status()
    }

    /// A header's value, if it is text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
    }
}

impl Client {
    fn new(token: Option<String>) -> Self {
        let endpoint = std::env::var("HF_ENDPOINT")
            .ok()
            .filter(|e| !e.trim().is_empty())
            .unwrap_or_else(|| DEFAULT_ENDPOINT.to_owned());
        let endpoint = Url::parse(endpoint.trim().trim_end_matches('/'))
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https") && u.has_host())
            .ok_or_else(|| format!("HF_ENDPOINT {endpoint:?} is not an http(s) URL"));
        let config = ureq::Agent::config_builder()
            .max_redirects(0)
            .http_status_as_error(false)
            .timeout_connect(Some(Duration::from_secs(30)))
            .timeout_recv_response(Some(Duration::from_secs(60)))
            // A body that stalls this long is an error, not a hang.
            .timeout_per_read(Some(Duration::from_secs(60)))
            .user_agent(concat!("safetensors-nano/", env!("CARGO_PKG_VERSION")))
            .build();
        Client {
            agent: config.into(),
            endpoint,
            token,
        }
    }

    /// The Hub endpoint (`HF_ENDPOINT`, else [`DEFAULT_ENDPOINT`]).
    ///
    /// # Errors
    /// `HF_ENDPOINT` is not an http(s) URL.
    pub fn endpoint(&self) -> Result<&Url, Error> {
        self.endpoint
            .as_ref()
            .map_err(|m| Error::new(Kind::InvalidUrl, m.clone()))
    }

    /// Whether `url` is on the Hub: the endpoint's origin (scheme, host
    /// and port).
    fn is_hub(&self, url: &Url) -> bool {
        self.endpoint
            .as_ref()
            .is_ok_and(|e| e.origin() == url.origin())
    }

    /// Whether a request to `url` carries the token: only to the Hub.
    fn authorizes(&self, url: &Url) -> bool {
        self.token.is_some() && self.is_hub(url)
    }

    /// GETs `url` with `headers`, following redirects (the token, if any,
    /// only on requests to the endpoint's origin). A transient failure is
    /// tried again, [`RETRIES`] times at most, after [`retry_delay`]; the
    /// last answer is returned whatever its status.
    ///
    /// # Errors
    /// The connection failed or timed out on every try; too many
    /// redirects, or one without a usable `Location`.
    pub fn get(&self, url: &Url, headers: &[(&str, &str)]) -> Result<Answer, Error> {
        let mut retry = 0;
        loop {
            let tries = retry + 1;
            let transient = match self.get_once(url, headers) {
                Ok(answer) if says_try_again(answer.status()) => Ok(answer),
                Err(e) if matches!(e.kind, Kind::Network | Kind::Timeout) => Err(e),
                done => return done.map(|answer| Answer { tries, ..answer }),
            };
            if retry == RETRIES {
                return match transient {
                    Ok(answer) => Ok(Answer { tries, ..answer }),
                    Err(e) => Err(e.after_tries(tries)),
                };
            }
            std::thread::sleep(retry_delay(retry));
            retry += 1;
        }
    }

    /// One try of [`Client::get`].
    fn get_once(&self, url: &Url, headers: &[(&str, &str)]) -> Result<Answer, Error> {
        let mut url = url.clone();
        for _ in 0..=MAX_REDIRECTS {
            let mut request = self.agent.get(url.as_str());
            for (name, value) in headers {
                request = request.header(*name, *value);
            }
            let token_sent = self.authorizes(&url);
            if let (true, Some(token)) = (token_sent, &self.token) {
                request = request.header("Authorization", format!("Bearer {token}"));
            }
            let response = request.call().map_err(|e| failed(&url, e))?;
            if !response.status().is_redirection() || response.status() == 304 {
                return Ok(Answer {
                    url,
                    response,
                    token_sent,
                    tries: 1,
                });
            }
            let location = response
                .headers()
                .get("Location")
                .and_then(|v| v.to_str().ok())
                .and_then(|l| url.join(l).ok())
                .filter(|u| matches!(u.scheme(), "http" | "https"))
                .ok_or_else(|| {
                    Error::new(
                        Kind::Http,
                        format!(
                            "{url}: HTTP {} without a usable Location",
                            response.status()
                        ),
                    )
                })?;
            url = location;
        }
        Err(Error::new(
            Kind::TooManyRedirects,
            format!("{url}: more than {MAX_REDIRECTS} redirects"),
        ))
    }
}

/// A request that got no answer, as an error.
fn failed(url: &Url, e: ureq::Error) -> Error {
    let kind = match e {
        ureq::Error::Timeout(_) => Kind::Timeout,
        _ => Kind::Network,
    };
    Error::new(kind, format!("{url}: {e}"))
}

/// An error answer (4xx, 5xx, or one we do not handle) as an error that says
/// what to do; `tried` are the URLs asked for (before redirects), the last
/// one answered. The Hub's 401, 403 and 404 get its kinds and advice.
pub fn status_error(answer: &Answer, tried: &[String]) -> Error {
    let status = answer.status();
    // The Hub's reason: ` (GatedRepo: Access to model … is restricted)`.
    let reason = match (
        answer.header("X-Error-Code"),
        answer.header("X-Error-Message"),
    ) {
        (Some(c), Some(m)) => format!(" ({c}: {})", m.trim_end_matches('.')),
        (Some(one), None) | (None, Some(one)) => format!(" ({one})"),
        (None, None) => String::new(),
    };
    let url = tried
        .last()
        .cloned()
        .unwrap_or_else(|| answer.url.to_string());
    let hub = Url::parse(&url).is_ok_and(|u| client().is_hub(&u));
    match (status.as_u16(), hub) {
        (401 | 403, true) => {
            let what = if answer.token_sent {
                "the token sent (HF_TOKEN or --token) has no access to it: use a token of an account \
                 that has access, and accept the repository's terms on the Hub if it is gated"
            } else {
                "set HF_TOKEN (or pass --token) to a token of an account with access, \
                 and accept the repository's terms on the Hub if it is gated"
            };
            Error::new(
                Kind::HubUnauthorized,
                format!(
                    "{url}: HTTP {status}{reason}; the repository is gated or private (or does not exist): {what}"
                ),
            )
        }
        (404, true) => Error::new(
            Kind::HubNotFound,
            format!("not found on the Hub{reason}; tried {}", tried.join(", ")),
        ),
        (404, false) => Error::new(
            Kind::Http,
            format!("not found (HTTP {status}); tried {}", tried.join(", ")),
        ),
        _ if answer.tries > 1 => Error::new(
            Kind::Http,
            format!(
                "{url}: HTTP {status}{reason} (tried {} times)",
                answer.tries
            ),
        ),
        _ => Error::new(Kind::Http, format!("{url}: HTTP {status}{reason}")),
    }
}
