//! E-mail for the venue: renders the engine's [`OutgoingEmail`](upstairs_engine::model::OutgoingEmail)s (plain text + HTML) and
//! delivers them through one of two transports behind the engine's [`Mailer`] port —
//! [`FileMailer`] (one `.eml` file per message, the zero-setup default) or [`SmtpMailer`].

mod file;
mod render;
mod smtp;

use std::path::Path;
use std::sync::Arc;

use upstairs_engine::Mailer;

pub use file::FileMailer;
pub use render::{preview, render};
pub use smtp::{SEND_TIMEOUT, SMTP_TIMEOUT, SmtpMailer, redact_url};

/// What every e-mail says about the venue itself: its name, the sender and how to reach
/// support. Configuration, so a deployment can brand and route its mail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MailSettings {
    /// Shown in subjects and bodies (e.g. "Upstairs").
    pub product_name: String,
    /// The `From` mailbox, e.g. `Upstairs <no-reply@upstairs.local>`.
    pub from: String,
    /// Support e-mail address printed at the end of every message.
    pub support_email: String,
    /// Support phone number printed at the end of every message.
    pub support_phone: String,
}

impl Default for MailSettings {
    /// The venue's defaults (`upstairs_engine::defaults`).
    fn default() -> Self {
        use upstairs_engine::defaults;
        Self {
            product_name: defaults::PRODUCT_NAME.into(),
            from: defaults::MAIL_FROM.into(),
            support_email: defaults::SUPPORT_EMAIL.into(),
            support_phone: defaults::SUPPORT_PHONE.into(),
        }
    }
}

/// Picks the transport from configuration: SMTP when `smtp_url` is set (and not blank),
/// otherwise `.eml` files in `mail_dir`, so a laptop needs no mail server.
pub fn mailer_from_config(
    smtp_url: Option<&str>,
    mail_dir: &Path,
    settings: MailSettings,
) -> Result<Arc<dyn Mailer>, String> {
    match smtp_url.map(str::trim).filter(|u| !u.is_empty()) {
        Some(url) => {
            let mailer = SmtpMailer::from_url(url, settings)?;
            tracing::info!(smtp = %redact_url(url), "e-mail goes out through SMTP");
            Ok(Arc::new(mailer))
        }
        None => {
            let mailer = FileMailer::new(mail_dir, settings)?;
            tracing::info!(dir = %mail_dir.display(), "e-mail is written to .eml files");
            Ok(Arc::new(mailer))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use upstairs_engine::model::{EmailTemplate, OutgoingEmail};

    fn email() -> OutgoingEmail {
        OutgoingEmail {
            message_id: "<cfg-test@localhost>".into(),
            to: "jane@broker.example".into(),
            template: EmailTemplate::AccountActivation {
                first_name: "Jane".into(),
                link: "http://localhost:8080/account-activate?hash=abc".into(),
            },
        }
    }

    #[tokio::test]
    async fn without_an_smtp_url_mail_goes_to_files() {
        for url in [None, Some(""), Some("  ")] {
            let tmp = tempfile::tempdir().expect("tempdir");
            let dir = tmp.path().join("mail");
            let mailer = mailer_from_config(url, &dir, MailSettings::default()).expect("mailer");
            mailer.send(&email()).await.expect("sent");
            assert!(dir.join("cfg-test_localhost.eml").is_file(), "{url:?}");
        }
    }

    #[test]
    fn an_smtp_url_picks_smtp_and_a_bad_one_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let settings = MailSettings::default();
        assert!(mailer_from_config(Some("smtp://127.0.0.1:2525"), dir.path(), settings.clone()).is_ok());
        let err = mailer_from_config(Some("http://user:pw@x"), dir.path(), settings).err().expect("refused");
        assert!(err.contains("invalid SMTP URL") && !err.contains(":pw@"), "{err}");
    }
}
