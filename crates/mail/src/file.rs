//! The file transport: each e-mail becomes one `.eml` file, for laptops, demos and tests.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use tokio::io::AsyncWriteExt;
use upstairs_engine::Mailer;
use upstairs_engine::model::{EmailPreview, OutgoingEmail};

use crate::{MailSettings, render};

/// Longest file name stem kept from a Message-ID (file systems allow 255 bytes).
const MAX_STEM: usize = 200;

/// Makes temporary names unique between concurrent sends in one process.
static TMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Writes each e-mail as an RFC 5322 `.eml` file named after its Message-ID, so a resend
/// replaces the same file and nothing needs a mail server. Files appear whole (written
/// to a temporary name, then renamed).
#[derive(Clone, Debug)]
pub struct FileMailer {
    dir: PathBuf,
    settings: MailSettings,
}

impl FileMailer {
    /// A mailer writing into `dir`, which is created (with its parents) if missing.
    pub fn new(dir: impl Into<PathBuf>, settings: MailSettings) -> Result<Self, String> {
        let dir = dir.into();
        std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create mail directory {}: {e}", dir.display()))?;
        Ok(Self { dir, settings })
    }

    /// The directory the `.eml` files go to.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the e-mail with this Message-ID is (or will be) written.
    pub fn path_for(&self, message_id: &str) -> PathBuf {
        self.dir.join(file_name(message_id))
    }

    async fn write(&self, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
        // The directory may have been cleaned since start-up.
        tokio::fs::create_dir_all(&self.dir).await?;
        let n = TMP_COUNTER.fetch_add(1, Ordering::Relaxed);
        // Hidden and without `.eml`, so readers looking for messages skip it.
        let tmp = self.dir.join(format!(".{}.{}-{n}.tmp", file_stem(path), std::process::id()));
        let result = async {
            let mut options = tokio::fs::OpenOptions::new();
            options.write(true).create(true).truncate(true);
            // The links in these files are secrets (password resets): owner only.
            #[cfg(unix)]
            options.mode(0o600);
            let mut file = options.open(&tmp).await?;
            file.write_all(bytes).await?;
            // On disk before it is visible: the outbox marks it sent once we return.
            file.sync_all().await?;
            drop(file);
            tokio::fs::rename(&tmp, path).await
        }
        .await;
        if result.is_err() {
            let _ = tokio::fs::remove_file(&tmp).await;
        }
        result
    }
}

#[async_trait]
impl Mailer for FileMailer {
    fn preview(&self, email: &OutgoingEmail) -> EmailPreview {
        crate::preview(&self.settings, &email.template)
    }

    async fn send(&self, email: &OutgoingEmail) -> Result<(), String> {
        let message = render(&self.settings, email)?;
        let path = self.path_for(&email.message_id);
        self.write(&path, &message.formatted())
            .await
            .map_err(|e| format!("cannot write e-mail to {}: {e}", path.display()))?;
        tracing::debug!(message_id = %email.message_id, path = %path.display(), "e-mail written");
        Ok(())
    }

    /// The file holds the links anyway: redacting the database's copy would protect nothing.
    fn keeps_copies(&self) -> bool {
        true
    }
}

/// `<0193…@localhost>` → `0193…_localhost.eml`: only `[A-Za-z0-9._-]`, never empty.
fn file_name(message_id: &str) -> String {
    let inner = message_id.trim().trim_start_matches('<').trim_end_matches('>');
    let mut stem: String = inner
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '_' })
        .take(MAX_STEM)
        .collect();
    // A leading dot would hide the file (and could be a temporary name).
    if stem.starts_with('.') {
        stem.replace_range(..1, "_");
    }
    if stem.is_empty() {
        stem.push_str("message");
    }
    format!("{stem}.eml")
}

fn file_stem(path: &Path) -> String {
    path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use upstairs_engine::model::EmailTemplate;

    fn email(link: &str) -> OutgoingEmail {
        OutgoingEmail {
            message_id: "<0193a5b2-7c1d-7e4f-9a0b-1c2d3e4f5a6b@localhost>".into(),
            to: "jane.doe@broker.example".into(),
            template: EmailTemplate::PasswordReset { first_name: "Jane".into(), link: link.into() },
        }
    }

    fn eml_files(dir: &Path) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> =
            std::fs::read_dir(dir).expect("read dir").map(|e| e.expect("entry").path()).collect();
        files.sort();
        files
    }

    #[test]
    fn file_names_are_sanitised() {
        assert_eq!(file_name("<0193-ab.c_d@localhost>"), "0193-ab.c_d_localhost.eml");
        assert_eq!(file_name("<../../etc/passwd>"), "_._.._etc_passwd.eml");
        assert_eq!(file_name("<>"), "message.eml");
        assert_eq!(file_name("<a/b\\c d>"), "a_b_c_d.eml");
        assert!(file_name(&format!("<{}@x>", "a".repeat(1000))).len() <= MAX_STEM + 4);
    }

    #[tokio::test]
    async fn writes_a_parseable_eml_and_creates_the_directory() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("mail").join("out");
        let mailer = FileMailer::new(&dir, MailSettings::default()).expect("mailer");
        let link = "http://localhost:8080/reset-password?hash=abc123";
        mailer.send(&email(link)).await.expect("sent");

        let files = eml_files(&dir);
        assert_eq!(files, vec![dir.join("0193a5b2-7c1d-7e4f-9a0b-1c2d3e4f5a6b_localhost.eml")]);
        let raw = std::fs::read_to_string(&files[0]).expect("read");
        // RFC 5322: headers, an empty line, the body; CRLF line ends.
        let (head, body) = raw.split_once("\r\n\r\n").expect("header/body separator");
        assert!(head.split("\r\n").all(|l| l.contains(": ") || l.starts_with([' ', '\t'])));
        assert!(head.contains("Message-ID: <0193a5b2-7c1d-7e4f-9a0b-1c2d3e4f5a6b@localhost>"));
        assert!(head.contains("To: jane.doe@broker.example"));
        assert!(head.contains("Subject: Reset your Upstairs password"));
        assert!(body.contains(&format!("\r\n{link}\r\n")));
        assert!(!raw.replace("\r\n", "").contains('\n'), "bare LF");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&files[0]).expect("metadata").permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "only the owner reads the links");
        }
    }

    #[tokio::test]
    async fn a_resend_overwrites_the_same_file() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let mailer = FileMailer::new(tmp.path(), MailSettings::default()).expect("mailer");
        mailer.send(&email("http://localhost/reset-password?hash=first")).await.expect("sent");
        mailer.send(&email("http://localhost/reset-password?hash=second")).await.expect("sent");

        let files = eml_files(tmp.path());
        assert_eq!(files.len(), 1, "one file, no temporary left: {files:?}");
        let raw = std::fs::read_to_string(&files[0]).expect("read");
        assert!(raw.contains("?hash=second") && !raw.contains("?hash=first"));
        assert_eq!(files[0], mailer.path_for("<0193a5b2-7c1d-7e4f-9a0b-1c2d3e4f5a6b@localhost>"));
    }

    #[tokio::test]
    async fn a_directory_removed_after_start_is_recreated() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("out");
        let mailer = FileMailer::new(&dir, MailSettings::default()).expect("mailer");
        std::fs::remove_dir(&dir).expect("remove");
        mailer.send(&email("http://localhost/x?hash=1")).await.expect("sent");
        assert_eq!(eml_files(&dir).len(), 1);
    }

    #[tokio::test]
    async fn a_bad_message_is_an_error_and_writes_nothing() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let mailer = FileMailer::new(tmp.path(), MailSettings::default()).expect("mailer");
        let mut bad = email("http://localhost/x?hash=1");
        bad.to = "nobody".into();
        assert!(mailer.send(&bad).await.is_err());
        assert!(eml_files(tmp.path()).is_empty());
    }
}
