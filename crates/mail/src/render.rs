//! Turns an [`OutgoingEmail`] into a MIME message: plain text and inline-styled HTML.

use lettre::Message;
use lettre::message::header::{ContentTransferEncoding, ContentType, HeaderName, HeaderValue};
use lettre::message::{Body, Mailbox, MultiPart, SinglePart};
use rust_decimal::Decimal;
use upstairs_domain::order::Direction;
use upstairs_domain::price::priced;
use upstairs_domain::quantity::grouped;
use upstairs_engine::model::{ConfirmationStep, DigestLevel, EmailPreview, EmailTemplate, OutgoingEmail, TradeDetails};

use crate::MailSettings;

/// RFC 5322: a line is at most 998 characters without its CRLF.
const MAX_LINE: usize = 998;

/// Renders `email` as a `multipart/alternative` message (plain text + HTML) with the
/// `Message-ID` fixed when it was queued, so a resend is recognisably the same message.
pub fn render(settings: &MailSettings, email: &OutgoingEmail) -> Result<Message, String> {
    check_message_id(&email.message_id)?;
    let from: Mailbox = settings.from.parse().map_err(|e| format!("invalid sender {:?}: {e}", settings.from))?;
    let to: Mailbox = email.to.parse().map_err(|e| format!("invalid recipient {:?}: {e}", email.to))?;
    let content = Content::of(settings, &email.template);

    Message::builder()
        .from(from)
        .to(to)
        .subject(content.subject.clone())
        .message_id(Some(email.message_id.clone()))
        // RFC 3834: tells auto-responders (vacation replies) not to answer.
        .raw_header(HeaderValue::new(HeaderName::new_from_ascii_str("Auto-Submitted"), "auto-generated".into()))
        .multipart(
            MultiPart::alternative()
                .singlepart(SinglePart::builder().header(ContentType::TEXT_PLAIN).body(text_body(content.plain_text())))
                .singlepart(SinglePart::builder().header(ContentType::TEXT_HTML).body(text_body(content.html()))),
        )
        .map_err(|e| format!("cannot build e-mail {}: {e}", email.message_id))
}

/// What an e-mail will say, as its reader sees it: the subject, the plain text and the
/// HTML of [`render`]'s message, for a preview before it is sent.
pub fn preview(settings: &MailSettings, template: &EmailTemplate) -> EmailPreview {
    let content = Content::of(settings, template);
    EmailPreview { html: content.html(), text: content.plain_text(), subject: content.subject }
}

/// A digest side as `2,100 @ 94.70, 4,200 @ 94.69`, or a dash when it is empty.
fn levels(side: &[DigestLevel], tick: Option<Decimal>) -> String {
    if side.is_empty() {
        return "-".to_owned();
    }
    side.iter().map(|l| format!("{} @ {}", grouped(l.quantity), priced(l.price, tick))).collect::<Vec<_>>().join(", ")
}

/// A Message-ID must be `<…>` in printable ASCII without spaces, or the header is malformed.
fn check_message_id(id: &str) -> Result<(), String> {
    let ok = id.len() > 2 && id.starts_with('<') && id.ends_with('>') && id.bytes().all(|b| b.is_ascii_graphic());
    if ok { Ok(()) } else { Err(format!("invalid Message-ID {id:?}")) }
}

/// A text body sent as `7bit` whenever it can be: lettre would pick quoted-printable for
/// lines over 76 characters, which turns `?hash=` into `?hash=3D` and breaks the link
/// for anyone reading the raw message. Other text falls back to lettre's own choice.
fn text_body(text: String) -> Body {
    if is_seven_bit_safe(&text) {
        let crlf = text.replace('\n', "\r\n");
        Body::dangerous_pre_encoded(crlf.into_bytes(), ContentTransferEncoding::SevenBit)
    } else {
        Body::new(text)
    }
}

/// ASCII without NUL or CR (lines end in a bare LF here) and every line under 998 chars.
fn is_seven_bit_safe(text: &str) -> bool {
    text.bytes().all(|b| b.is_ascii() && b != 0 && b != b'\r') && text.split('\n').all(|line| line.len() < MAX_LINE)
}

/// Control characters (a newline in a name, say) would reshape the message; make them spaces.
fn one_line(s: &str) -> String {
    s.chars().map(|c| if c.is_control() { ' ' } else { c }).collect::<String>().trim().to_owned()
}

/// Escapes text for HTML element content and quoted attribute values. Non-ASCII becomes
/// a numeric reference, so the HTML part stays 7-bit and its link readable in the raw file.
fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if !c.is_ascii() => out.push_str(&format!("&#x{:X};", u32::from(c))),
            _ => out.push(c),
        }
    }
    out
}

/// The words of one e-mail, shared by the text and HTML parts.
struct Content {
    subject: String,
    product: String,
    first_name: String,
    /// Why the reader got this e-mail.
    intro: String,
    /// What the link does and how long it lasts.
    action: String,
    button: &'static str,
    link: String,
    /// A trade's fields, or a digest's instruments, shown as a table (empty for account e-mails).
    details: Vec<(String, String)>,
    /// A second choice beside the button, with its own link (declining a trade).
    decline: Option<(&'static str, String)>,
    ignore: String,
    support_email: String,
    support_phone: String,
}

fn side_of(trade: &TradeDetails) -> &'static str {
    match trade.direction {
        Direction::Buy => "Buy",
        Direction::Sell => "Sell",
    }
}

/// A trade's fields as the broker's e-mails show them.
fn trade_rows(trade: &TradeDetails) -> Vec<(String, String)> {
    [
        ("Client", one_line(&trade.client_name)),
        ("Trader", one_line(&trade.trader_name)),
        ("Instrument", one_line(&trade.instrument_name)),
        ("Side", side_of(trade).to_owned()),
        ("Quantity", grouped(trade.quantity)),
        ("Price", priced(trade.price.normalize(), trade.tick_size)),
        ("Counterparty broker", one_line(&trade.counterparty_broker_name)),
        ("Matched at", trade.matched_at.format("%Y-%m-%d %H:%M:%S UTC").to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .chain(trade.allocations.iter().map(|l| {
        (format!("Account {}", one_line(&l.code)), format!("{} ({})", grouped(l.quantity), one_line(&l.name)))
    }))
    .chain(trade.give_up_broker_name.iter().map(|b| ("Give-up broker".to_owned(), one_line(b))))
    .collect()
}

impl Content {
    fn of(settings: &MailSettings, template: &EmailTemplate) -> Self {
        let product = one_line(&settings.product_name);
        // An e-mail that only tells (a declined trade) has no button.
        let no_link = String::new();
        let mut details = Vec::new();
        let mut decline = None;
        let (subject, first_name, link, intro, action, button, ignore) = match template {
            EmailTemplate::PasswordReset { first_name, link } => (
                format!("Reset your {product} password"),
                first_name,
                link,
                format!("We received a request to reset the password of your {product} account."),
                "Use the link below to choose a new password. It can be used once and \
                 expires in 1 hour."
                    .to_owned(),
                "Reset your password",
                "If you did not ask for this, ignore this e-mail: your password stays as it is.".to_owned(),
            ),
            EmailTemplate::AccountActivation { first_name, link } => (
                format!("Activate your {product} account"),
                first_name,
                link,
                format!("An account has been created for you on {product}."),
                "Use the link below to activate it and choose your password. It can be used \
                 once and expires in 72 hours."
                    .to_owned(),
                "Activate your account",
                "If you did not expect this, ignore this e-mail: the account stays inactive.".to_owned(),
            ),
            EmailTemplate::EmailChanged { first_name, link } => (
                format!("The e-mail address of your {product} account was changed"),
                first_name,
                link,
                format!(
                    "The e-mail address of your {product} account was changed by an administrator. \
                     This address no longer signs in, and the account's sessions and links have ended."
                ),
                "The new address receives the next sign-in links; use \"Forgot password\" there to \
                 sign in again."
                    .to_owned(),
                "Go to sign-in",
                format!(
                    "If you did not expect this change, contact support at once: {} or {}.",
                    one_line(&settings.support_email),
                    one_line(&settings.support_phone)
                ),
            ),
            EmailTemplate::TradeDeclined { step, trade } => {
                let side = side_of(trade);
                details = trade_rows(trade);
                let client = one_line(&trade.client_name);
                let instrument = one_line(&trade.instrument_name);
                let when = match step {
                    ConfirmationStep::Accept => "accepting it",
                    ConfirmationStep::Fill => "confirming its fill",
                };
                (
                    format!("Trade declined: {client}, {side} {} {instrument}", grouped(trade.quantity)),
                    &trade.broker_name,
                    &no_link,
                    format!(
                        "A broker declined this block trade of your client {client} on {product} instead of {when}, \
                         so the trade does not go ahead."
                    ),
                    "There is nothing for you to do: the links we sent you for this trade no longer work, \
                     and both traders have been told."
                        .to_owned(),
                    "",
                    "If you had already booked the trade, please reverse it.".to_owned(),
                )
            }
            EmailTemplate::TradeAllocated { trade } => {
                let side = side_of(trade);
                details = trade_rows(trade);
                let client = one_line(&trade.client_name);
                let instrument = one_line(&trade.instrument_name);
                (
                    format!("Trade allocated: {client}, {side} {} {instrument}", grouped(trade.quantity)),
                    &trade.broker_name,
                    &no_link,
                    format!("Your client {client} allocated this block trade on {product} to its accounts."),
                    "Please book the trade to these accounts. This allocation replaces any we sent you \
                     before for this trade."
                        .to_owned(),
                    "",
                    "If an account is unknown to you, please contact your client.".to_owned(),
                )
            }
            EmailTemplate::TradeConfirmation { step, trade, confirm_link, decline_link } => {
                let side = side_of(trade);
                details = trade_rows(trade);
                let client = one_line(&trade.client_name);
                let instrument = one_line(&trade.instrument_name);
                match step {
                    ConfirmationStep::Accept => {
                        decline = Some(("Decline the trade", decline_link.clone()));
                        (
                            format!("Trade to accept: {client}, {side} {} {instrument}", grouped(trade.quantity)),
                            &trade.broker_name,
                            confirm_link,
                            format!("Your client {client} matched a block trade on {product}, with you as its broker."),
                            "Please accept the trade, or decline it. Each link opens the trade for you \
                             to confirm; it can be answered once and expires in 7 days."
                                .to_owned(),
                            "Accept the trade",
                            "If you do not recognise this trade, decline it: both sides are told.".to_owned(),
                        )
                    }
                    ConfirmationStep::Fill => {
                        decline = Some(("Report it not filled", decline_link.clone()));
                        (
                            format!(
                                "Trade to confirm filled: {client}, {side} {} {instrument}",
                                grouped(trade.quantity)
                            ),
                            &trade.broker_name,
                            confirm_link,
                            format!("Both brokers accepted this block trade of your client {client} on {product}."),
                            "Once it is reported to the exchange, please confirm the fill. Each link \
                             opens the trade for you to confirm; it can be answered once and expires \
                             in 7 days."
                                .to_owned(),
                            "Confirm the fill",
                            "If the trade could not be filled, report it: both sides are told.".to_owned(),
                        )
                    }
                }
            }
            EmailTemplate::OrdersDigest { first_name, newsletter, description, instruments, dashboard_link } => {
                details = instruments
                    .iter()
                    .map(|i| {
                        // Instrument names usually carry their term already ("Euribor 3M Dec26-Mar27").
                        let (name, term) = (one_line(&i.name), one_line(&i.term));
                        let label =
                            if name.contains(&term) { name } else { format!("{name} {term}").trim().to_owned() };
                        (
                            label,
                            format!(
                                "Bids: {} | Offers: {}",
                                levels(&i.bids, i.tick_size),
                                levels(&i.offers, i.tick_size)
                            ),
                        )
                    })
                    .collect();
                let newsletter = one_line(newsletter);
                let action = if instruments.is_empty() {
                    "No instrument has resting interest right now.".to_owned()
                } else {
                    "Resting interest in the block book now, per instrument: each price level and the size \
                     it shows (quantity @ price, best first). No firm is named; hidden size is not shown."
                        .to_owned()
                };
                (
                    format!("{product} orders digest: {newsletter}"),
                    first_name,
                    dashboard_link,
                    one_line(description),
                    action,
                    "Open the dashboard",
                    format!(
                        "You receive this digest as a recipient of the {product} newsletter \"{newsletter}\". \
                         Ask your {product} contact to take you off it."
                    ),
                )
            }
        };
        Self {
            subject,
            first_name: one_line(first_name),
            link: link.trim().to_owned(),
            details,
            decline: decline.map(|(label, link)| (label, link.trim().to_owned())),
            intro,
            action,
            button,
            ignore,
            support_email: one_line(&settings.support_email),
            support_phone: one_line(&settings.support_phone),
            product,
        }
    }

    fn support_line(&self) -> String {
        format!("Need help? Contact {} support at {} or {}.", self.product, self.support_email, self.support_phone)
    }

    fn plain_text(&self) -> String {
        let details: String = self.details.iter().map(|(k, v)| format!("{k}: {v}\n")).collect();
        let details = if details.is_empty() { details } else { format!("\n{details}") };
        let (link, decline) = match &self.decline {
            Some((label, decline)) => {
                (format!("{}:\n{}\n\n", self.button, self.link), format!("{label}:\n{decline}\n\n"))
            }
            None if self.link.is_empty() => (String::new(), String::new()),
            None => (format!("{}\n\n", self.link), String::new()),
        };
        // A link stands alone on its line so mail clients and people can pick it out.
        format!(
            "Hello {first_name},\n\
             \n\
             {intro}\n\
             {action}\n\
             {details}\
             \n\
             {link}\
             {decline}\
             {ignore}\n\
             \n\
             {support}\n\
             \n\
             -- \n\
             {product}\n",
            first_name = self.first_name,
            intro = self.intro,
            action = self.action,
            ignore = self.ignore,
            support = self.support_line(),
            product = self.product,
        )
    }

    fn html(&self) -> String {
        let e = html_escape;
        let muted = "font-size:13px;line-height:20px;color:#52606d;";
        let link_style = "color:#1a56db;word-break:break-all;";
        let details = if self.details.is_empty() {
            String::new()
        } else {
            let rows: String = self
                .details
                .iter()
                .map(|(k, v)| {
                    format!(
                        "<tr><td style=\"padding:4px 16px 4px 0;color:#52606d;\">{}</td>\
                         <td style=\"padding:4px 0;font-weight:bold;\">{}</td></tr>\n",
                        e(k),
                        e(v)
                    )
                })
                .collect();
            format!(
                "<table role=\"presentation\" cellpadding=\"0\" cellspacing=\"0\" style=\"margin:0 0 16px;\">\n{rows}</table>\n"
            )
        };
        let button = if self.link.is_empty() {
            String::new()
        } else {
            format!(
                "<p style=\"margin:24px 0;\"><a href=\"{link}\" style=\"display:inline-block;\
                 padding:12px 20px;background:#1a56db;color:#ffffff;text-decoration:none;\
                 border-radius:4px;font-weight:bold;\">{button}</a></p>\n\
                 <p style=\"margin:0 0 16px;{muted}\">If the button does not work, copy this link \
                 into your browser:<br>\n\
                 <a href=\"{link}\" style=\"{link_style}\">{link}</a></p>\n",
                link = e(&self.link),
                button = e(self.button),
            )
        };
        let decline = match &self.decline {
            Some((label, link)) => format!(
                "<p style=\"margin:0 0 16px;\"><a href=\"{link}\" style=\"{link_style}\">{label}</a></p>\n",
                link = e(link),
                label = e(label)
            ),
            None => String::new(),
        };
        format!(
            "<!DOCTYPE html>\n\
             <html lang=\"en\">\n\
             <head>\n\
             <meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <title>{subject}</title>\n\
             </head>\n\
             <body style=\"margin:0;padding:24px;background:#f4f5f7;\
             font-family:Arial,Helvetica,sans-serif;color:#1f2933;\">\n\
             <table role=\"presentation\" width=\"100%\" cellpadding=\"0\" cellspacing=\"0\" \
             style=\"max-width:560px;margin:0 auto;background:#ffffff;border-radius:6px;\">\n\
             <tr><td style=\"padding:32px;font-size:15px;line-height:22px;\">\n\
             <p style=\"margin:0 0 24px;font-size:20px;font-weight:bold;\">{product}</p>\n\
             <p style=\"margin:0 0 16px;\">Hello {first_name},</p>\n\
             <p style=\"margin:0 0 16px;\">{intro}</p>\n\
             <p style=\"margin:0 0 16px;\">{action}</p>\n\
             {details}\
             {button}\
             {decline}\
             <p style=\"margin:0 0 16px;\">{ignore}</p>\n\
             <hr style=\"border:none;border-top:1px solid #e4e7eb;margin:24px 0;\">\n\
             <p style=\"margin:0;{muted}\">Need help? Contact {product} support at \
             <a href=\"mailto:{support_email}\" style=\"color:#1a56db;\">{support_email}</a> \
             or {support_phone}.</p>\n\
             </td></tr>\n\
             </table>\n\
             </body>\n\
             </html>\n",
            subject = e(&self.subject),
            product = e(&self.product),
            first_name = e(&self.first_name),
            intro = e(&self.intro),
            action = e(&self.action),
            button = button,
            ignore = e(&self.ignore),
            support_email = e(&self.support_email),
            support_phone = e(&self.support_phone),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINK: &str = "http://localhost:8080/reset-password?hash=\
        3f9a0c1b2d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8";

    fn settings() -> MailSettings {
        MailSettings::default()
    }

    fn reset(first_name: &str) -> OutgoingEmail {
        OutgoingEmail {
            message_id: "<0193a5b2-7c1d-7e4f-9a0b-1c2d3e4f5a6b@localhost>".into(),
            to: "jane.doe@broker.example".into(),
            template: EmailTemplate::PasswordReset { first_name: first_name.into(), link: LINK.into() },
        }
    }

    fn activation(first_name: &str) -> OutgoingEmail {
        OutgoingEmail {
            message_id: "<0193a5b2-0000-7e4f-9a0b-1c2d3e4f5a6b@localhost>".into(),
            to: "Jane Doe <jane.doe@broker.example>".into(),
            template: EmailTemplate::AccountActivation {
                first_name: first_name.into(),
                link: LINK.replace("reset-password", "account-activate"),
            },
        }
    }

    fn raw(settings: &MailSettings, email: &OutgoingEmail) -> String {
        let message = render(settings, email).expect("renders");
        String::from_utf8(message.formatted()).expect("utf-8")
    }

    /// The unfolded value of a top-level header.
    fn header<'a>(raw: &'a str, name: &str) -> Option<&'a str> {
        let head = raw.split("\r\n\r\n").next()?;
        head.split("\r\n").find_map(|l| l.strip_prefix(&format!("{name}: ")))
    }

    /// The decoded-as-is body of the part with the given content type.
    fn part<'a>(raw: &'a str, content_type: &str) -> &'a str {
        let start = raw.find(&format!("Content-Type: {content_type}")).expect("part present");
        let rest = &raw[start..];
        let body = &rest[rest.find("\r\n\r\n").expect("part body") + 4..];
        &body[..body.find("\r\n--").expect("boundary after part")]
    }

    #[test]
    fn subjects_name_the_product_and_the_action() {
        assert_eq!(header(&raw(&settings(), &reset("Jane")), "Subject"), Some("Reset your Upstairs password"));
        assert_eq!(header(&raw(&settings(), &activation("Jane")), "Subject"), Some("Activate your Upstairs account"));
        let other = MailSettings { product_name: "Blocks".into(), ..settings() };
        assert_eq!(header(&raw(&other, &reset("Jane")), "Subject"), Some("Reset your Blocks password"));
        assert_eq!(header(&raw(&other, &activation("Jane")), "Subject"), Some("Activate your Blocks account"));
    }

    #[test]
    fn an_email_change_tells_the_old_address_what_to_do_and_whom_to_call() {
        let email = OutgoingEmail {
            message_id: "<0193a5b2-0000-7e4f-9a0b-1c2d3e4f5a6c@localhost>".into(),
            to: "jane.doe@broker.example".into(),
            template: EmailTemplate::EmailChanged {
                first_name: "Jane".into(),
                link: "https://upstairs.example/login".into(),
            },
        };
        let raw = raw(&settings(), &email);
        assert_eq!(header(&raw, "Subject"), Some("The e-mail address of your Upstairs account was changed"));
        let text = part(&raw, "text/plain");
        assert!(text.starts_with("Hello Jane,"), "{text}");
        assert!(text.contains("https://upstairs.example/login"), "{text}");
        let s = settings();
        assert!(text.contains(&s.support_email) && text.contains(&s.support_phone), "{text}");
    }

    #[test]
    fn headers_carry_the_queued_message_id_and_addresses() {
        let email = reset("Jane");
        let raw = raw(&settings(), &email);
        assert_eq!(header(&raw, "Message-ID"), Some(email.message_id.as_str()));
        assert_eq!(header(&raw, "To"), Some("jane.doe@broker.example"));
        assert_eq!(header(&raw, "From"), Some("Upstairs <no-reply@upstairs.local>"));
        assert!(header(&raw, "Date").is_some());
        assert_eq!(header(&raw, "Auto-Submitted"), Some("auto-generated"));
        assert!(header(&raw, "Content-Type").is_some_and(|v| v.starts_with("multipart/alternative")));
    }

    #[test]
    fn link_is_verbatim_in_the_raw_plain_text() {
        for email in [reset("Jane"), activation("Jane")] {
            let raw = raw(&settings(), &email);
            let link = email.template.links()[0];
            let text = part(&raw, "text/plain");
            assert!(text.lines().any(|l| l == link), "link alone on a line:\n{text}");
            assert!(!raw.contains("=3D"), "no quoted-printable:\n{raw}");
            assert!(raw.contains("Content-Transfer-Encoding: 7bit"));
            assert!(part(&raw, "text/html").contains(&format!("href=\"{link}\"")));
        }
    }

    #[test]
    fn body_greets_explains_and_gives_support() {
        let reset = raw(&settings(), &reset("Jane"));
        let text = part(&reset, "text/plain");
        assert!(text.starts_with("Hello Jane,\r\n"));
        assert!(text.contains("expires in 1 hour"));
        assert!(text.contains("reset the password"));
        assert!(text.contains("If you did not ask for this, ignore this e-mail"));
        assert!(text.contains("support@upstairs.example"));
        assert!(text.contains("+44 20 7946 0000"));

        let activation = raw(&settings(), &activation("Jane"));
        let text = part(&activation, "text/plain");
        assert!(text.contains("expires in 72 hours"));
        assert!(text.contains("activate it"));
        assert!(text.contains("ignore this e-mail"));
        let html = part(&activation, "text/html");
        assert!(html.contains("expires in 72 hours"));
        assert!(html.contains("mailto:support@upstairs.example"));
        assert!(html.contains("+44 20 7946 0000"));
        assert!(!html.contains("<script") && !html.contains("src="), "no external resources");
    }

    #[test]
    fn first_name_is_escaped_in_html() {
        let raw = raw(&settings(), &reset("<b>Jo & \"Al\"</b>"));
        let html = part(&raw, "text/html");
        assert!(html.contains("Hello &lt;b&gt;Jo &amp; &quot;Al&quot;&lt;/b&gt;,"), "{html}");
        assert!(!html.contains("<b>Jo"));
        // The plain text shows the name as typed.
        assert!(part(&raw, "text/plain").starts_with("Hello <b>Jo & \"Al\"</b>,"));
    }

    #[test]
    fn a_newline_in_a_name_cannot_add_lines() {
        let raw = raw(&settings(), &reset("Jane\r\nBcc: x@evil.example"));
        assert!(part(&raw, "text/plain").starts_with("Hello Jane  Bcc: x@evil.example,\r\n"));
        assert!(header(&raw, "Bcc").is_none());
    }

    #[test]
    fn non_ascii_names_render_and_the_html_link_stays_verbatim() {
        let raw = raw(&settings(), &reset("Zoë"));
        // The plain text needs quoted-printable for the name; the HTML stays 7-bit.
        assert!(raw.contains("Content-Transfer-Encoding: quoted-printable"));
        let html = part(&raw, "text/html");
        assert!(html.contains("Hello Zo&#xEB;,"), "{html}");
        assert!(html.contains(&format!(">{LINK}</a>")));
    }

    #[test]
    fn bad_addresses_and_ids_are_errors() {
        let mut email = reset("Jane");
        email.to = "not an address".into();
        assert!(render(&settings(), &email).is_err());

        let bad_from = MailSettings { from: "nobody".into(), ..settings() };
        assert!(render(&bad_from, &reset("Jane")).is_err());

        for id in ["", "<>", "no-brackets@x", "<a b@x>", "<a@x>\r\nBcc: y@z"] {
            let mut email = reset("Jane");
            email.message_id = id.into();
            assert!(render(&settings(), &email).is_err(), "{id:?} accepted");
        }
    }

    fn trade(step: ConfirmationStep) -> OutgoingEmail {
        use upstairs_engine::model::TradeDetails;
        let link = |yes: bool| format!("http://localhost:8080/accept-order?order_id=0193&token=abc&accepted={yes}");
        OutgoingEmail {
            message_id: "<0193a5b2-1111-7e4f-9a0b-1c2d3e4f5a6b@localhost>".into(),
            to: "confirmations@broker.example".into(),
            template: EmailTemplate::TradeConfirmation {
                step,
                trade: TradeDetails {
                    broker_name: "Meridian <Brokers>".into(),
                    client_name: "Northwind".into(),
                    trader_name: "Jane Doe".into(),
                    instrument_name: "ICE Brent Jan27".into(),
                    direction: Direction::Sell,
                    quantity: 2500,
                    price: "71.25".parse().unwrap(),
                    tick_size: Some("0.005".parse().unwrap()),
                    counterparty_broker_name: "Harbour Futures".into(),
                    matched_at: "2026-11-25T10:01:02Z".parse().unwrap(),
                    allocations: vec![],
                    give_up_broker_name: None,
                },
                confirm_link: link(true),
                decline_link: link(false),
            },
        }
    }

    #[test]
    fn a_trade_confirmation_shows_the_trade_and_both_links() {
        let raw = raw(&settings(), &trade(ConfirmationStep::Accept));
        assert_eq!(header(&raw, "Subject"), Some("Trade to accept: Northwind, Sell 2,500 ICE Brent Jan27"));
        let text = part(&raw, "text/plain");
        for line in [
            "Price: 71.250",
            "Side: Sell",
            "Quantity: 2,500",
            "Counterparty broker: Harbour Futures",
            "Matched at: 2026-11-25 10:01:02 UTC",
            "Accept the trade:",
            "Decline the trade:",
        ] {
            assert!(text.lines().any(|l| l == line), "{line:?} in\n{text}");
        }
        for yes in ["true", "false"] {
            let link = format!("http://localhost:8080/accept-order?order_id=0193&token=abc&accepted={yes}");
            assert!(text.lines().any(|l| l == link), "{link} alone on a line");
            assert!(part(&raw, "text/html").contains(&format!("href=\"{}\"", link.replace('&', "&amp;"))));
        }
        assert!(part(&raw, "text/html").contains("Meridian &lt;Brokers&gt;"));
        let fill = raw_fill();
        assert_eq!(header(&fill, "Subject"), Some("Trade to confirm filled: Northwind, Sell 2,500 ICE Brent Jan27"));
        assert!(part(&fill, "text/plain").contains("Confirm the fill:"));
    }

    #[test]
    fn a_declined_trade_tells_the_other_broker_without_a_link() {
        let OutgoingEmail { message_id, to, template } = trade(ConfirmationStep::Accept);
        let EmailTemplate::TradeConfirmation { trade, .. } = template else { unreachable!() };
        let email = OutgoingEmail {
            message_id,
            to,
            template: EmailTemplate::TradeDeclined { step: ConfirmationStep::Accept, trade },
        };
        assert!(email.template.links().is_empty());
        let raw = raw(&settings(), &email);
        assert_eq!(header(&raw, "Subject"), Some("Trade declined: Northwind, Sell 2,500 ICE Brent Jan27"));
        let text = part(&raw, "text/plain");
        assert!(text.contains("instead of accepting it"), "{text}");
        assert!(text.lines().any(|l| l == "Price: 71.250"), "{text}");
        assert!(!text.contains("http"), "no link: {text}");
        let html = part(&raw, "text/html");
        assert!(!html.contains("<a href=\"\""), "no empty button: {html}");
        assert!(html.contains("no longer work"));
    }

    #[test]
    fn an_allocation_names_each_account_and_the_give_up_broker() {
        let EmailTemplate::TradeConfirmation { mut trade, .. } = trade(ConfirmationStep::Accept).template else {
            unreachable!()
        };
        let line = |code: &str, name: &str, quantity| upstairs_engine::model::AllocationLine {
            account_id: Default::default(),
            code: code.into(),
            name: name.into(),
            quantity,
        };
        trade.allocations = vec![line("NW-1", "Northwind Macro", 2000), line("NW-2", "Northwind Rates", 500)];
        trade.give_up_broker_name = Some("Baltic".into());
        let email = OutgoingEmail {
            message_id: "<a@localhost>".into(),
            to: "confirmations@broker.example".into(),
            template: EmailTemplate::TradeAllocated { trade },
        };
        assert!(email.template.links().is_empty());
        let raw = raw(&settings(), &email);
        assert_eq!(header(&raw, "Subject"), Some("Trade allocated: Northwind, Sell 2,500 ICE Brent Jan27"));
        let text = part(&raw, "text/plain");
        assert!(text.lines().any(|l| l == "Account NW-1: 2,000 (Northwind Macro)"), "{text}");
        assert!(text.lines().any(|l| l == "Account NW-2: 500 (Northwind Rates)"), "{text}");
        assert!(text.lines().any(|l| l == "Give-up broker: Baltic"), "{text}");
        assert!(!text.contains("http"), "no link: {text}");
    }

    fn raw_fill() -> String {
        raw(&settings(), &trade(ConfirmationStep::Fill))
    }

    #[test]
    fn seven_bit_check() {
        assert!(is_seven_bit_safe("plain\nascii"));
        assert!(!is_seven_bit_safe("Zoë"));
        assert!(!is_seven_bit_safe("a\rb"));
        assert!(!is_seven_bit_safe(&"x".repeat(MAX_LINE)));
        assert!(is_seven_bit_safe(&"x".repeat(MAX_LINE - 1)));
    }

    fn digest(instruments: Vec<upstairs_engine::model::DigestInstrument>) -> EmailTemplate {
        EmailTemplate::OrdersDigest {
            first_name: "Anna".into(),
            newsletter: "Rates <desk>".into(),
            description: "Morning interest".into(),
            instruments,
            dashboard_link: "http://localhost:8080/dashboard".into(),
        }
    }

    #[test]
    fn the_digest_lists_levels_best_first_and_escapes_the_newsletter() {
        let level = |p: &str, q| DigestLevel { price: p.parse().unwrap(), quantity: q };
        let euribor = upstairs_engine::model::DigestInstrument {
            name: "Euribor 3M Dec26-Mar27".into(),
            term: "Dec26-Mar27".into(),
            min_block: 500,
            tick_size: Some("0.005".parse().unwrap()),
            bids: vec![level("94.700", 2000), level("94.69", 500)],
            offers: vec![],
        };
        let bund =
            upstairs_engine::model::DigestInstrument { name: "Bund".into(), term: "Mar27".into(), ..euribor.clone() };
        let p = preview(&settings(), &digest(vec![euribor, bund]));
        assert_eq!(p.subject, "Upstairs orders digest: Rates <desk>");
        assert!(
            p.text.contains("Euribor 3M Dec26-Mar27: Bids: 2,000 @ 94.700, 500 @ 94.690 | Offers: -\n"),
            "{}",
            p.text
        );
        assert!(p.text.contains("Bund Mar27: Bids:"), "a name without its term gets it: {}", p.text);
        assert!(p.html.contains("Rates &lt;desk&gt;") && !p.html.contains("<desk>"), "{}", p.html);
        let empty = preview(&settings(), &digest(vec![]));
        assert!(empty.text.contains("No instrument has resting interest right now."), "{}", empty.text);
    }
}
