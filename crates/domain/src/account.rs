//! Account values parsed at the edge: e-mail, password, match-request preference.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A validation failure on one input field, with the text the UI shows.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

impl FieldError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self { field: field.into(), message: message.into() }
    }
}

/// A trimmed, lower-cased, plausibly valid e-mail address.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Email(String);

impl Email {
    /// Parses with the spec's rules and texts (trader spec section 5).
    pub fn parse(raw: &str) -> Result<Email, &'static str> {
        let s = raw.trim();
        if s.is_empty() {
            return Err("Email is required");
        }
        if !Self::looks_valid(s) {
            return Err("Please enter a valid email address");
        }
        if s.chars().count() < 5 {
            return Err("Email must be at least 5 characters long");
        }
        Ok(Email(s.to_lowercase()))
    }

    fn looks_valid(s: &str) -> bool {
        let Some((local, domain)) = s.split_once('@') else {
            return false;
        };
        let ok_chars = |p: &str| !p.is_empty() && !p.chars().any(|c| c.is_whitespace() || c == '@' || c.is_control());
        ok_chars(local)
            && ok_chars(domain)
            && s.len() <= 254
            && domain.contains('.')
            && !domain.starts_with('.')
            && !domain.ends_with('.')
            && !domain.contains("..")
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Email {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The special characters a password may use to satisfy the special-character rule.
pub const PASSWORD_SPECIALS: &str = "!@#$%^&+=-";

/// A password that satisfies every rule of trader spec section 5.
#[derive(Clone, PartialEq, Eq)]
pub struct Password(String);

impl fmt::Debug for Password {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Password(***)")
    }
}

impl Password {
    /// The rule texts, in the order the checklist shows them.
    pub const RULES: [&'static str; 7] = [
        "Minimum length: 10 characters",
        "Maximum length: 30 characters",
        "At least one uppercase letter",
        "At least one lowercase letter",
        "At least one number",
        "At least one special character: !@#$%^&+=-",
        "No spaces",
    ];

    /// The texts of every rule `raw` breaks; empty when it is acceptable.
    pub fn broken_rules(raw: &str) -> Vec<&'static str> {
        let n = raw.chars().count();
        let checks = [
            n >= 10,
            n <= 30,
            raw.chars().any(|c| c.is_ascii_uppercase()),
            raw.chars().any(|c| c.is_ascii_lowercase()),
            raw.chars().any(|c| c.is_ascii_digit()),
            raw.chars().any(|c| PASSWORD_SPECIALS.contains(c)),
            !raw.chars().any(char::is_whitespace),
        ];
        Self::RULES.iter().zip(checks).filter(|(_, ok)| !ok).map(|(t, _)| *t).collect()
    }

    pub fn parse(raw: &str) -> Result<Password, Vec<&'static str>> {
        let broken = Self::broken_rules(raw);
        if broken.is_empty() { Ok(Password(raw.to_owned())) } else { Err(broken) }
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

/// How the user answers match requests addressed to them when they do not act.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum AutoAccept {
    Instant,
    AcceptWithDelay,
    RejectWithDelay,
}

impl AutoAccept {
    pub fn as_str(self) -> &'static str {
        match self {
            AutoAccept::Instant => "INSTANT",
            AutoAccept::AcceptWithDelay => "ACCEPT_WITH_DELAY",
            AutoAccept::RejectWithDelay => "REJECT_WITH_DELAY",
        }
    }

    pub fn parse(s: &str) -> Option<AutoAccept> {
        [AutoAccept::Instant, AutoAccept::AcceptWithDelay, AutoAccept::RejectWithDelay]
            .into_iter()
            .find(|a| a.as_str() == s)
    }
}

/// One entry of a user's UI state (e.g. key `TOOLTIPS` with the read tooltips).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UiMetadataEntry {
    pub key: String,
    pub value: serde_json::Value,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn email_rules_and_texts() {
        let cases: &[(&str, Result<&str, &str>)] = &[
            ("", Err("Email is required")),
            ("   ", Err("Email is required")),
            ("not-an-email", Err("Please enter a valid email address")),
            ("a@b", Err("Please enter a valid email address")),
            ("a b@c.de", Err("Please enter a valid email address")),
            ("x@.de", Err("Please enter a valid email address")),
            ("a@b.c", Ok("a@b.c")),
            ("  Ada@Example.COM ", Ok("ada@example.com")),
        ];
        for (raw, expected) in cases {
            let got = Email::parse(raw);
            match expected {
                Ok(v) => assert_eq!(got.as_ref().map(Email::as_str), Ok(*v), "{raw:?}"),
                Err(e) => assert_eq!(got.err(), Some(*e), "{raw:?}"),
            }
        }
    }

    #[test]
    fn short_but_well_formed_email_is_rejected_for_length() {
        // "a@b.c" is exactly 5 characters; nothing shorter can be well formed with a dot,
        // so the length rule guards the boundary.
        assert!(Email::parse("a@b.c").is_ok());
    }

    #[test]
    fn password_rules_each_have_their_text() {
        assert!(Password::parse("Valid-Pass1").is_ok());
        assert_eq!(Password::broken_rules("Sh0rt-a"), vec!["Minimum length: 10 characters"]);
        assert_eq!(Password::broken_rules(&format!("Aa1-{}", "x".repeat(27))), vec!["Maximum length: 30 characters"]);
        assert_eq!(Password::broken_rules("lower-case-1"), vec!["At least one uppercase letter"]);
        assert_eq!(Password::broken_rules("UPPER-CASE-1"), vec!["At least one lowercase letter"]);
        assert_eq!(Password::broken_rules("No-Digits-Here"), vec!["At least one number"]);
        assert_eq!(Password::broken_rules("NoSpecial123"), vec!["At least one special character: !@#$%^&+=-"]);
        assert_eq!(Password::broken_rules("Has Space-12"), vec!["No spaces"]);
        assert_eq!(Password::broken_rules("").len(), 5);
        // 30 characters exactly is allowed, 10 exactly is allowed
        assert!(Password::parse(&format!("Aa1-{}", "x".repeat(26))).is_ok());
        assert!(Password::parse("Aa1-567890").is_ok());
    }

    #[test]
    fn password_debug_hides_the_secret() {
        let p = Password::parse("Valid-Pass1").unwrap();
        assert_eq!(format!("{p:?}"), "Password(***)");
    }

    #[test]
    fn auto_accept_spellings() {
        for a in [AutoAccept::Instant, AutoAccept::AcceptWithDelay, AutoAccept::RejectWithDelay] {
            assert_eq!(AutoAccept::parse(a.as_str()), Some(a));
            assert_eq!(serde_json::to_value(a).unwrap(), a.as_str());
        }
        assert_eq!(AutoAccept::parse("Instant"), None);
    }
}
