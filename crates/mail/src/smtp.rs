//! The SMTP transport, configured by one URL, and the redaction of such URLs for logs.

use std::fmt;
use std::time::Duration;

use async_trait::async_trait;
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Tls, TlsParameters};
use lettre::{AsyncSmtpTransport, AsyncTransport, Tokio1Executor};
use upstairs_engine::Mailer;
use upstairs_engine::model::{EmailPreview, OutgoingEmail};
use url::{Host, Url};

use crate::{MailSettings, render};

/// Limit for connecting to the relay (lettre's async transport applies its timeout to
/// the connection only; [`SEND_TIMEOUT`] bounds the rest).
pub const SMTP_TIMEOUT: Duration = Duration::from_secs(10);

/// Default limit for a whole delivery (connect, TLS, AUTH, MAIL, RCPT, DATA): a relay
/// that stops answering fails the send, and the outbox retries later instead of a worker
/// waiting for ever.
pub const SEND_TIMEOUT: Duration = Duration::from_secs(30);

/// Sends e-mail to an SMTP relay (lettre, one connection per message). Errors never carry
/// the relay's password, since they end up in logs and in the outbox table.
pub struct SmtpMailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    settings: MailSettings,
    /// The URL with its password hidden, to name the relay in errors.
    endpoint: String,
    /// The password as written and decoded, scrubbed from any error text.
    secrets: Vec<String>,
    send_timeout: Duration,
}

impl fmt::Debug for SmtpMailer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SmtpMailer").field("endpoint", &self.endpoint).finish_non_exhaustive()
    }
}

impl SmtpMailer {
    /// A mailer for a relay given as a URL:
    /// - `smtp://host:port` — plain, no TLS (local relays and tests; default port 25);
    /// - `smtp://user:pass@host:port` — with AUTH (user and password percent-encoded);
    /// - `smtps://…` — implicit TLS (default port 465);
    /// - `smtp://…?tls=starttls` (or `tls=required`) — STARTTLS required (default port 587);
    ///   `tls=opportunistic` uses STARTTLS when offered.
    ///
    /// A user and password over a connection that may stay plain (`smtp://` without
    /// `tls=starttls`) are refused: they would cross the network readable. A relay that
    /// really takes them so (one on the same host) is named with `insecure_auth=true`.
    pub fn from_url(url: &str, settings: MailSettings) -> Result<Self, String> {
        let endpoint = redact_url(url);
        let bad = |why: &str| format!("invalid SMTP URL {endpoint}: {why}");
        let parsed = Url::parse(url).map_err(|e| bad(&e.to_string()))?;

        let host = match parsed.host() {
            Some(Host::Domain(d)) if !d.is_empty() => d.to_owned(),
            Some(Host::Ipv4(ip)) => ip.to_string(),
            Some(Host::Ipv6(ip)) => ip.to_string(),
            _ => return Err(bad("no host")),
        };
        let mut tls_mode = None;
        let mut insecure_auth = false;
        for (key, value) in parsed.query_pairs() {
            match key.as_ref() {
                "tls" => tls_mode = Some(value.into_owned()),
                "insecure_auth" => match value.as_ref() {
                    "true" => insecure_auth = true,
                    "false" => {}
                    other => return Err(bad(&format!("insecure_auth={other:?} (use true or false)"))),
                },
                other => return Err(bad(&format!("unknown parameter {other:?}"))),
            }
        }
        let tls_parameters = || TlsParameters::new(host.clone()).map_err(|e| bad(&format!("TLS set-up: {e}")));
        let (tls, default_port) = match (parsed.scheme(), tls_mode.as_deref()) {
            ("smtp", None | Some("none")) => (Tls::None, 25),
            ("smtp", Some("starttls" | "required")) => (Tls::Required(tls_parameters()?), 587),
            ("smtp", Some("opportunistic")) => (Tls::Opportunistic(tls_parameters()?), 587),
            ("smtps", None | Some("implicit" | "wrapper")) => (Tls::Wrapper(tls_parameters()?), 465),
            ("smtp" | "smtps", Some(other)) => {
                return Err(bad(&format!("tls={other:?} (use starttls, opportunistic, or smtps:// for implicit TLS)")));
            }
            (scheme, _) => return Err(bad(&format!("scheme {scheme:?} (use smtp or smtps)"))),
        };

        let encrypted = matches!(tls, Tls::Required(_) | Tls::Wrapper(_));
        if parsed.password().is_some() && !encrypted && !insecure_auth {
            return Err(bad(
                "a password over a connection that may stay unencrypted (use smtps://, ?tls=starttls, or \
                 add insecure_auth=true for a relay on this host)",
            ));
        }
        let mut builder = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(host)
            .port(parsed.port().unwrap_or(default_port))
            .tls(tls)
            .timeout(Some(SMTP_TIMEOUT));

        let mut secrets = Vec::new();
        if let Some(raw_password) = parsed.password() {
            let user = percent_decode(parsed.username()).map_err(|e| bad(&e))?;
            let password = percent_decode(raw_password).map_err(|e| bad(&e))?;
            secrets.push(raw_password.to_owned());
            secrets.push(password.clone());
            builder = builder.credentials(Credentials::new(user, password));
        } else if !parsed.username().is_empty() {
            return Err(bad("a user without a password"));
        }
        secrets.retain(|s| !s.is_empty());
        // Longest first, so a secret that contains another is hidden whole.
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));

        Ok(Self { transport: builder.build(), settings, endpoint, secrets, send_timeout: SEND_TIMEOUT })
    }

    /// The same mailer with another limit for a whole delivery (default [`SEND_TIMEOUT`]).
    pub fn with_send_timeout(mut self, limit: Duration) -> Self {
        self.send_timeout = limit;
        self
    }

    /// Replaces every occurrence of the password in `text`.
    fn scrub(&self, text: String) -> String {
        self.secrets.iter().fold(text, |t, s| t.replace(s.as_str(), "***"))
    }
}

#[async_trait]
impl Mailer for SmtpMailer {
    fn preview(&self, email: &OutgoingEmail) -> EmailPreview {
        crate::preview(&self.settings, &email.template)
    }

    async fn send(&self, email: &OutgoingEmail) -> Result<(), String> {
        let message = render(&self.settings, email)?;
        let outcome = tokio::time::timeout(self.send_timeout, self.transport.send(message)).await;
        let error = match outcome {
            Ok(Ok(response)) => {
                tracing::debug!(
                    message_id = %email.message_id,
                    code = %response.code(),
                    "e-mail accepted by the SMTP relay"
                );
                return Ok(());
            }
            Ok(Err(e)) => e.to_string(),
            Err(_) => format!("no answer within {:?}", self.send_timeout),
        };
        Err(self.scrub(format!("SMTP {}: {error}", self.endpoint)))
    }
}

fn percent_decode(s: &str) -> Result<String, String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or("bad percent-encoding in the user or password")?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| "the user or password is not UTF-8".to_owned())
}

/// Hides the password of a URL (`smtp://user:***@host:587`) so it can be logged; the rest
/// of the URL is kept as written. Text that is not a URL is returned unchanged.
pub fn redact_url(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return url.to_owned();
    };
    let rest_start = scheme_end + 3;
    let rest = &url[rest_start..];
    // The user info ends at the last '@' before the query or fragment; searching that far
    // (not only to the first '/') still hides a password with an unencoded '/'.
    let before_query = &rest[..rest.find(['?', '#']).unwrap_or(rest.len())];
    let Some(at) = before_query.rfind('@') else {
        return url.to_owned();
    };
    let user_info = &before_query[..at];
    let Some(colon) = user_info.find(':') else {
        return url.to_owned();
    };
    let password_start = rest_start + colon + 1;
    let password_end = rest_start + at;
    if password_start == password_end {
        return url.to_owned();
    }
    format!("{}***{}", &url[..password_start], &url[password_end..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redact_url_hides_only_the_password() {
        let cases = [
            ("smtp://user:s3cret@mail.example:587", "smtp://user:***@mail.example:587"),
            (
                "smtps://me%40x.example:p%40ss@smtp.x.example?tls=starttls",
                "smtps://me%40x.example:***@smtp.x.example?tls=starttls",
            ),
            ("smtp://u:pa/ss@host:25/ehlo", "smtp://u:***@host:25/ehlo"),
            ("smtp://u:p@ss@host", "smtp://u:***@host"),
            ("postgres://app:pw@db:5432/upstairs", "postgres://app:***@db:5432/upstairs"),
            ("smtp://localhost:1025", "smtp://localhost:1025"),
            ("smtp://user@host", "smtp://user@host"),
            ("smtp://user:@host", "smtp://user:@host"),
            ("smtp://host?from=a@b", "smtp://host?from=a@b"),
            ("not a url", "not a url"),
            ("", ""),
        ];
        for (input, expected) in cases {
            assert_eq!(redact_url(input), expected, "{input}");
        }
    }

    #[test]
    fn urls_are_accepted_or_refused_with_reasons() {
        let ok = [
            "smtp://127.0.0.1:2525",
            "smtp://user:pass@localhost:2525?insecure_auth=true",
            "smtps://user:pass@smtp.example.com",
            "smtp://user:pass@smtp.example.com?tls=starttls",
            "smtp://smtp.example.com?tls=required",
            "smtp://smtp.example.com:587?tls=opportunistic",
            "smtp://[::1]:2525",
        ];
        for url in ok {
            SmtpMailer::from_url(url, MailSettings::default()).expect(url);
        }
        let bad = [
            "http://host",
            "smtp://host?tls=maybe",
            "smtps://host?tls=starttls",
            "smtp://host?timeout=3",
            "smtp://user@host",
            "smtp://user:pass@smtp.example.com",
            "smtp://user:pass@smtp.example.com:587?tls=opportunistic",
            "smtp://user:pass@localhost:2525?insecure_auth=yes",
            "smtp:///nohost",
            "no url at all",
        ];
        for url in bad {
            let err = SmtpMailer::from_url(url, MailSettings::default()).expect_err(url);
            assert!(err.starts_with("invalid SMTP URL"), "{err}");
        }
    }

    #[test]
    fn errors_and_debug_never_show_the_password() {
        let url = "smtp://user:hunter2secret@host?tls=bogus";
        let err = SmtpMailer::from_url(url, MailSettings::default()).expect_err("bad tls");
        assert!(!err.contains("hunter2secret"), "{err}");

        let m =
            SmtpMailer::from_url("smtp://u:p%2Fw0rd@host:25?tls=starttls", MailSettings::default()).expect("mailer");
        assert!(!format!("{m:?}").contains("w0rd"));
        assert_eq!(m.scrub("auth failed for p/w0rd and p%2Fw0rd".into()), "auth failed for *** and ***");
    }

    #[test]
    fn percent_decoding() {
        assert_eq!(percent_decode("p%40ss%2F%25").as_deref(), Ok("p@ss/%"));
        assert!(percent_decode("bad%zz").is_err());
        assert!(percent_decode("cut%4").is_err());
    }
}
