//! STOMP 1.2 frames: parsing (incremental, heart-beats, content-length, header
//! escapes) and encoding.

/// One STOMP frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    pub command: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

/// What the parser yields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    Frame(Frame),
    HeartBeat,
}

#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("malformed frame: {0}")]
    Malformed(&'static str),
    #[error("frame too large")]
    TooLarge,
}

/// Largest frame we accept from a client.
pub const MAX_FRAME: usize = 64 * 1024;

impl Frame {
    pub fn new(command: &str) -> Self {
        Self { command: command.to_owned(), headers: vec![], body: vec![] }
    }

    pub fn header(mut self, k: &str, v: &str) -> Self {
        self.headers.push((k.to_owned(), v.to_owned()));
        self
    }

    pub fn body(mut self, body: Vec<u8>) -> Self {
        self.body = body;
        self
    }

    /// The first value of a header (STOMP 1.2: the first occurrence wins).
    pub fn get(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    /// Serialises with escaped headers and a `content-length` when there is a body.
    pub fn encode(&self) -> Vec<u8> {
        let escape = !matches!(self.command.as_str(), "CONNECT" | "CONNECTED");
        let mut out = Vec::with_capacity(64 + self.body.len());
        out.extend_from_slice(self.command.as_bytes());
        out.push(b'\n');
        for (k, v) in &self.headers {
            if escape {
                out.extend_from_slice(escape_header(k).as_bytes());
                out.push(b':');
                out.extend_from_slice(escape_header(v).as_bytes());
            } else {
                out.extend_from_slice(k.as_bytes());
                out.push(b':');
                out.extend_from_slice(v.as_bytes());
            }
            out.push(b'\n');
        }
        if !self.body.is_empty() && self.get("content-length").is_none() {
            out.extend_from_slice(format!("content-length:{}\n", self.body.len()).as_bytes());
        }
        out.push(b'\n');
        out.extend_from_slice(&self.body);
        out.push(0);
        out
    }
}

fn escape_header(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            '\r' => o.push_str("\\r"),
            ':' => o.push_str("\\c"),
            c => o.push(c),
        }
    }
    o
}

fn unescape_header(s: &str) -> Result<String, FrameError> {
    let mut o = String::with_capacity(s.len());
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c != '\\' {
            o.push(c);
            continue;
        }
        match it.next() {
            Some('\\') => o.push('\\'),
            Some('n') => o.push('\n'),
            Some('r') => o.push('\r'),
            Some('c') => o.push(':'),
            _ => return Err(FrameError::Malformed("undefined escape sequence in header")),
        }
    }
    Ok(o)
}

/// Accumulates bytes from WebSocket messages and yields complete items.
#[derive(Default)]
pub struct Parser {
    buf: Vec<u8>,
}

impl Parser {
    pub fn push(&mut self, data: &[u8]) -> Result<Vec<Item>, FrameError> {
        // What is buffered never passes one frame's size: refused before it is copied.
        if self.buf.len() + data.len() > MAX_FRAME + 1 {
            return Err(FrameError::TooLarge);
        }
        self.buf.extend_from_slice(data);
        let mut items = Vec::new();
        loop {
            // Heart-beats (EOLs) between frames.
            match self.buf.first() {
                None => break,
                Some(b'\n') => {
                    self.buf.drain(..1);
                    items.push(Item::HeartBeat);
                    continue;
                }
                Some(b'\r') if self.buf.get(1) == Some(&b'\n') => {
                    self.buf.drain(..2);
                    items.push(Item::HeartBeat);
                    continue;
                }
                Some(b'\r') if self.buf.len() == 1 => break,
                _ => {}
            }
            match parse_one(&self.buf)? {
                Some((frame, used)) => {
                    self.buf.drain(..used);
                    items.push(Item::Frame(frame));
                }
                None => {
                    if self.buf.len() > MAX_FRAME {
                        return Err(FrameError::TooLarge);
                    }
                    break;
                }
            }
        }
        Ok(items)
    }
}

/// Parses one frame from the start of `buf`; `None` when it is not complete yet.
fn parse_one(buf: &[u8]) -> Result<Option<(Frame, usize)>, FrameError> {
    let Some(head_end) = find_head_end(buf) else {
        return Ok(None);
    };
    let (head, sep_len) = head_end;
    let head_text = std::str::from_utf8(&buf[..head]).map_err(|_| FrameError::Malformed("headers are not UTF-8"))?;
    let mut lines = head_text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    let command = lines.next().unwrap_or("").to_owned();
    if command.is_empty() || !command.chars().all(|c| c.is_ascii_uppercase()) {
        return Err(FrameError::Malformed("missing or invalid command"));
    }
    let escape = !matches!(command.as_str(), "CONNECT" | "CONNECTED");
    let mut headers = Vec::new();
    for line in lines {
        let (k, v) = line.split_once(':').ok_or(FrameError::Malformed("header line without ':'"))?;
        if escape {
            headers.push((unescape_header(k)?, unescape_header(v)?));
        } else {
            headers.push((k.to_owned(), v.to_owned()));
        }
    }
    let body_start = head + sep_len;
    let content_length = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .map(|(_, v)| v.trim().parse::<usize>().map_err(|_| FrameError::Malformed("bad content-length")))
        .transpose()?;
    let (body, end) = match content_length {
        Some(n) => {
            if n > MAX_FRAME {
                return Err(FrameError::TooLarge);
            }
            if buf.len() < body_start + n + 1 {
                return Ok(None);
            }
            if buf[body_start + n] != 0 {
                return Err(FrameError::Malformed("frame not terminated by NUL after content-length"));
            }
            (buf[body_start..body_start + n].to_vec(), body_start + n + 1)
        }
        None => match buf[body_start..].iter().position(|b| *b == 0) {
            Some(p) => (buf[body_start..body_start + p].to_vec(), body_start + p + 1),
            None => return Ok(None),
        },
    };
    Ok(Some((Frame { command, headers, body }, end)))
}

/// Index of the blank line ending the headers and the length of that separator.
fn find_head_end(buf: &[u8]) -> Option<(usize, usize)> {
    let mut i = 0;
    while i < buf.len() {
        if buf[i] == b'\n' {
            if buf.get(i + 1) == Some(&b'\n') {
                return Some((i, 2));
            }
            if buf.get(i + 1) == Some(&b'\r') && buf.get(i + 2) == Some(&b'\n') {
                return Some((i, 3));
            }
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(items: Vec<Item>) -> Vec<Frame> {
        items
            .into_iter()
            .filter_map(|i| match i {
                Item::Frame(f) => Some(f),
                Item::HeartBeat => None,
            })
            .collect()
    }

    #[test]
    fn parses_connect_with_bearer() {
        let mut p = Parser::default();
        let got = p
            .push(b"CONNECT\naccept-version:1.2\nhost:localhost\nAuthorization:Bearer abc:def\nheart-beat:10000,10000\n\n\0")
            .unwrap();
        let f = &frames(got)[0];
        assert_eq!(f.command, "CONNECT");
        assert_eq!(f.get("Authorization"), Some("Bearer abc:def"), "CONNECT headers are not unescaped");
        assert_eq!(f.get("heart-beat"), Some("10000,10000"));
    }

    #[test]
    fn split_across_messages_and_heartbeats() {
        let mut p = Parser::default();
        assert_eq!(p.push(b"\n").unwrap(), vec![Item::HeartBeat]);
        assert!(p.push(b"SUBSCRIBE\nid:sub-0\ndestina").unwrap().is_empty());
        let got = p.push(b"tion:/user/topic/notifications\n\n\0\r\nSEND\ndestination:/x\n\nhi\0").unwrap();
        assert_eq!(got.len(), 3);
        let fs = frames(got);
        assert_eq!(fs[0].get("destination"), Some("/user/topic/notifications"));
        assert_eq!(fs[1].body, b"hi");
    }

    #[test]
    fn content_length_allows_nul_in_body() {
        let mut p = Parser::default();
        let fs = frames(p.push(b"SEND\ncontent-length:3\n\na\0b\0").unwrap());
        assert_eq!(fs[0].body, b"a\0b");
        assert_eq!(
            Parser::default().push(b"SEND\ncontent-length:1\n\nab\0"),
            Err(FrameError::Malformed("frame not terminated by NUL after content-length"))
        );
    }

    #[test]
    fn header_escapes_round_trip_and_first_wins() {
        let f = Frame::new("MESSAGE").header("destination", "/a:b\\c\nd").header("x", "1").header("x", "2");
        let mut p = Parser::default();
        let got = frames(p.push(&f.encode()).unwrap());
        assert_eq!(got[0].get("destination"), Some("/a:b\\c\nd"));
        assert_eq!(got[0].get("x"), Some("1"));
        assert!(Parser::default().push(b"SEND\nbad:\\t\n\n\0").is_err());
    }

    #[test]
    fn encode_adds_content_length() {
        let bytes = Frame::new("MESSAGE").header("destination", "/d").body(b"{}".to_vec()).encode();
        assert_eq!(bytes, b"MESSAGE\ndestination:/d\ncontent-length:2\n\n{}\0");
    }

    #[test]
    fn rejects_garbage_and_oversize() {
        assert!(Parser::default().push(b"hello world\n\n\0").is_err());
        assert!(Parser::default().push(b"SEND\nno-colon\n\n\0").is_err());
        let mut big = b"SEND\n".to_vec();
        big.extend(std::iter::repeat_n(b'a', MAX_FRAME + 10));
        assert_eq!(Parser::default().push(&big), Err(FrameError::TooLarge));
    }
}
