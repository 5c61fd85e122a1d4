//! Request templates: the placeholders that make each request different, so
//! that a cache keyed by the URL, a user or a body can grow under load as it
//! does in production.
//!
//! | placeholder | renders |
//! |---|---|
//! | `{n}` | a sequence number unique across the whole leakcheck process: never reused in a later cycle, route or fresh target |
//! | `{n%K}` | the same number modulo K: K distinct values in rotation |
//! | `{uuid}` | a random version-4 UUID |
//! | `{rand:A-B}` | a random integer from A to B inclusive |
//! | `{name}` | in a scenario, a value an earlier step captured |
//!
//! Anything else between braces is literal text, so JSON bodies need no
//! escaping (`{"user":"u{n}"}` renders `{"user":"u17"}`). Templates are
//! parsed once; rendering appends to a buffer the caller reuses, so the
//! load generator's hot loop allocates nothing per request once its buffers
//! have grown (numbers go through `itoa`, random values through a
//! per-connection xorshift generator).

use std::sync::atomic::{AtomicU64, Ordering};

/// The `{n}` sequence, shared by every load run of this process: cycles,
/// routes and fresh targets never see a number twice.
static SEQUENCE: AtomicU64 = AtomicU64::new(0);

/// Takes the next `{n}`.
pub fn next_sequence() -> u64 {
    SEQUENCE.fetch_add(1, Ordering::Relaxed)
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(Vec<u8>),
    Sequence,
    SequenceModulo(u64),
    Uuid,
    Random { low: u64, span: u64 },
    Captured(String),
}

/// A parsed template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    parts: Vec<Part>,
}

/// A scenario's captured values, looked up by name while rendering.
pub trait Captures {
    fn get(&self, name: &str) -> Option<&[u8]>;
}

/// No captures: requests outside a scenario.
pub struct NoCaptures;

impl Captures for NoCaptures {
    fn get(&self, _: &str) -> Option<&[u8]> {
        None
    }
}

/// A template that cannot be parsed, or a render that lacks a value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    #[error(
        "{{{inner}}}: K in {{n%K}} must be a whole number from 1 to {}",
        u64::MAX
    )]
    Modulo { inner: String },
    #[error("{{{inner}}}: write {{rand:A-B}} with whole numbers A <= B")]
    Range { inner: String },
    #[error("{{{inner}}} names no capture of an earlier step (captured so far: {known})")]
    UnknownCapture { inner: String, known: String },
    #[error("capture {{{name}}} has no value")]
    NoValue { name: String },
}

/// What a render needs: the request's (or iteration's) `{n}`, the
/// connection's random generator and the captures.
pub struct RenderContext<'a> {
    pub sequence: u64,
    pub rng: &'a mut Rng,
    pub captures: &'a dyn Captures,
}

impl Template {
    /// Parses `text`. In a scenario, `captures` holds the names it may
    /// refer to as `{name}`, and an identifier in braces that is not one of
    /// them is an error (a typo would otherwise be sent as text); outside
    /// one (`None`) such braces are literal text.
    pub fn parse(text: &str, captures: Option<&[String]>) -> Result<Template, TemplateError> {
        let mut parts = Vec::new();
        let mut literal = Vec::new();
        let mut rest = text;
        while let Some(open) = rest.find('{') {
            let Some(close) = rest[open..].find('}').map(|c| open + c) else {
                break;
            };
            let inner = &rest[open + 1..close];
            // `{"user":"u{n}"}`: the placeholder is the innermost brace pair.
            if let Some(nested) = inner.rfind('{') {
                let at = open + 1 + nested;
                literal.extend_from_slice(&rest.as_bytes()[..at]);
                rest = &rest[at..];
                continue;
            }
            match placeholder(inner, captures)? {
                Some(part) => {
                    literal.extend_from_slice(&rest.as_bytes()[..open]);
                    if !literal.is_empty() {
                        parts.push(Part::Literal(std::mem::take(&mut literal)));
                    }
                    parts.push(part);
                }
                None => literal.extend_from_slice(&rest.as_bytes()[..=close]),
            }
            rest = &rest[close + 1..];
        }
        literal.extend_from_slice(rest.as_bytes());
        if !literal.is_empty() {
            parts.push(Part::Literal(literal));
        }
        Ok(Template { parts })
    }

    /// The text when the template has no placeholder.
    pub fn as_fixed(&self) -> Option<&[u8]> {
        match self.parts.as_slice() {
            [] => Some(&[]),
            [Part::Literal(bytes)] => Some(bytes),
            _ => None,
        }
    }

    /// Whether rendering takes a `{n}`.
    pub fn uses_sequence(&self) -> bool {
        self.parts
            .iter()
            .any(|p| matches!(p, Part::Sequence | Part::SequenceModulo(_)))
    }

    /// Appends the rendered text to `out`. A capture with no value is an
    /// error naming it: the request is not sent with `{name}` in it.
    pub fn render(&self, out: &mut Vec<u8>, ctx: &mut RenderContext) -> Result<(), TemplateError> {
        let mut digits = itoa::Buffer::new();
        for part in &self.parts {
            match part {
                Part::Literal(bytes) => out.extend_from_slice(bytes),
                Part::Sequence => out.extend_from_slice(digits.format(ctx.sequence).as_bytes()),
                Part::SequenceModulo(k) => {
                    out.extend_from_slice(digits.format(ctx.sequence % k).as_bytes());
                }
                Part::Uuid => ctx.rng.uuid_into(out),
                Part::Random { low, span } => {
                    let value = low + ctx.rng.below(*span);
                    out.extend_from_slice(digits.format(value).as_bytes());
                }
                Part::Captured(name) => match ctx.captures.get(name) {
                    Some(value) => out.extend_from_slice(value),
                    None => return Err(TemplateError::NoValue { name: name.clone() }),
                },
            }
        }
        Ok(())
    }
}

/// What `{inner}` means: a placeholder, or `None` for literal text.
fn placeholder(inner: &str, captures: Option<&[String]>) -> Result<Option<Part>, TemplateError> {
    if inner == "n" {
        return Ok(Some(Part::Sequence));
    }
    if inner == "uuid" {
        return Ok(Some(Part::Uuid));
    }
    if let Some(k) = inner.strip_prefix("n%") {
        let k: u64 = k
            .parse()
            .ok()
            .filter(|k| *k > 0)
            .ok_or_else(|| TemplateError::Modulo {
                inner: inner.to_string(),
            })?;
        return Ok(Some(Part::SequenceModulo(k)));
    }
    if let Some(range) = inner.strip_prefix("rand:") {
        let bounds = range
            .split_once('-')
            .and_then(|(a, b)| Some((a.trim().parse::<u64>().ok()?, b.trim().parse::<u64>().ok()?)))
            .filter(|(a, b)| a <= b)
            .ok_or_else(|| TemplateError::Range {
                inner: inner.to_string(),
            })?;
        let span = (bounds.1 - bounds.0).saturating_add(1);
        return Ok(Some(Part::Random {
            low: bounds.0,
            span,
        }));
    }
    let identifier = !inner.is_empty()
        && inner.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !inner.starts_with(|c: char| c.is_ascii_digit());
    if identifier && let Some(captures) = captures {
        if captures.iter().any(|c| c == inner) {
            return Ok(Some(Part::Captured(inner.to_string())));
        }
        let known = if captures.is_empty() {
            "none yet".to_string()
        } else {
            captures.join(", ")
        };
        return Err(TemplateError::UnknownCapture {
            inner: inner.to_string(),
            known,
        });
    }
    Ok(None)
}

/// xorshift64*: a connection's own random numbers for `{uuid}` and
/// `{rand:A-B}`. Not cryptographic; unique enough for test data.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// Seeded from the clock and `stream` (the connection's index), so two
    /// connections and two runs differ.
    pub fn new(stream: u64) -> Rng {
        let clock = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        Rng((clock ^ stream.wrapping_mul(0x9E37_79B9_7F4A_7C15)) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..span` (`span` 0 means the whole u64 range).
    pub fn below(&mut self, span: u64) -> u64 {
        if span == 0 {
            self.next_u64()
        } else {
            self.next_u64() % span
        }
    }

    /// Appends a version-4 UUID in its 36-character form.
    pub fn uuid_into(&mut self, out: &mut Vec<u8>) {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&self.next_u64().to_le_bytes());
        bytes[8..].copy_from_slice(&self.next_u64().to_le_bytes());
        bytes[6] = (bytes[6] & 0x0f) | 0x40;
        bytes[8] = (bytes[8] & 0x3f) | 0x80;
        for (i, byte) in bytes.iter().enumerate() {
            if matches!(i, 4 | 6 | 8 | 10) {
                out.push(b'-');
            }
            out.push(HEX[(byte >> 4) as usize]);
            out.push(HEX[(byte & 15) as usize]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(template: &Template, sequence: u64) -> String {
        let mut rng = Rng::new(1);
        let mut out = Vec::new();
        let mut ctx = RenderContext {
            sequence,
            rng: &mut rng,
            captures: &NoCaptures,
        };
        template.render(&mut out, &mut ctx).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn placeholders_render_and_json_braces_stay() {
        let t = Template::parse(r#"{"user":"u{n}","shard":{n%4}}"#, None).unwrap();
        assert_eq!(render(&t, 17), r#"{"user":"u17","shard":1}"#);
        assert!(t.uses_sequence());
        let fixed = Template::parse("/item?id=1&x={}", None).unwrap();
        assert_eq!(fixed.as_fixed(), Some(&b"/item?id=1&x={}"[..]));
    }

    #[test]
    fn uuid_and_rand_have_their_shape() {
        let t = Template::parse("{uuid}/{rand:5-7}", None).unwrap();
        let text = render(&t, 0);
        let (uuid, number) = text.split_once('/').unwrap();
        assert_eq!(uuid.len(), 36);
        assert_eq!(&uuid[14..15], "4", "{uuid}");
        assert!((5..=7).contains(&number.parse::<u64>().unwrap()));
    }

    #[test]
    fn bad_placeholders_and_unknown_captures_are_errors() {
        assert!(Template::parse("{n%0}", None).is_err());
        // One past u64: the message says the range, not a parse failure.
        let too_big = Template::parse("{n%18446744073709551616}", None).unwrap_err();
        assert!(matches!(too_big, TemplateError::Modulo { .. }));
        assert!(
            too_big
                .to_string()
                .contains("from 1 to 18446744073709551615")
        );
        assert!(matches!(
            Template::parse("{rand:9-2}", None),
            Err(TemplateError::Range { .. })
        ));
        let names = vec!["token".to_string()];
        assert!(Template::parse("Bearer {tokn}", Some(&names)).is_err());
        assert!(Template::parse("Bearer {token}", Some(&names)).is_ok());
        assert!(Template::parse("Bearer {token}", Some(&[])).is_err());
        assert_eq!(
            Template::parse("{tokn}", None).unwrap().as_fixed(),
            Some(&b"{tokn}"[..]),
            "outside a scenario it is text"
        );
    }

    #[test]
    fn a_missing_capture_fails_the_render() {
        let names = vec!["token".to_string()];
        let t = Template::parse("Bearer {token}", Some(&names)).unwrap();
        let mut rng = Rng::new(1);
        let mut ctx = RenderContext {
            sequence: 0,
            rng: &mut rng,
            captures: &NoCaptures,
        };
        let error = t.render(&mut Vec::new(), &mut ctx).unwrap_err();
        assert_eq!(
            error,
            TemplateError::NoValue {
                name: "token".into()
            }
        );
        assert!(error.to_string().contains("{token}"), "{error}");
    }

    #[test]
    fn the_sequence_never_repeats() {
        let a = next_sequence();
        let b = next_sequence();
        assert!(b > a);
    }
}
