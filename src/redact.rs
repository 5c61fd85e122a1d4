//! Secrets out of command lines before they reach a report or a terminal:
//! a `--load-cmd` often carries a bearer token, an API key in a header, a
//! password in a URL or a `TOKEN=…` assignment. Word by word (no shell
//! parsing: the command is only shown, never run from this text), values
//! of the forms below become `***`. Passing secrets through the
//! environment (`$TOKEN` in the command, the value exported) keeps them
//! out of every report whatever their form.

/// Names whose value is a secret, in a header (`X-Api-Key:`), an option
/// (`--password=…`) or an assignment (`API_TOKEN=…`), compared lowercased.
const SECRET_NAMES: [&str; 8] = [
    "authorization",
    "cookie",
    "token",
    "secret",
    "password",
    "passwd",
    "apikey",
    "api-key",
];
/// Authentication schemes whose next word is the credential.
const SCHEMES: [&str; 3] = ["bearer", "basic", "token"];

const HIDDEN: &str = "***";

fn is_secret_name(name: &str) -> bool {
    let name = name.to_ascii_lowercase().replace('_', "-");
    SECRET_NAMES.iter().any(|s| name.contains(s)) || name.ends_with("-key") || name == "key"
}

/// The command with secret values replaced by `***`, its spacing kept.
pub fn command(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut hide_next = false;
    for (index, word) in text.split(' ').enumerate() {
        if index > 0 {
            out.push(' ');
        }
        let bare = word.trim_matches(|c| c == '\'' || c == '"');
        let lower = bare.to_ascii_lowercase();
        if hide_next && !bare.is_empty() {
            if SCHEMES.contains(&lower.as_str()) {
                out.push_str(word);
                continue;
            }
            out.push_str(&hidden(word, bare));
            hide_next = false;
            continue;
        }
        if let Some(name) = bare.strip_suffix(':')
            && is_secret_name(name)
        {
            hide_next = true;
            out.push_str(word);
            continue;
        }
        if SCHEMES.contains(&lower.as_str()) {
            hide_next = true;
            out.push_str(word);
            continue;
        }
        // `NAME=value`, `--name=value`, `Name:value`; `$NAME` is a reference.
        let assigned = bare
            .split_once('=')
            .or_else(|| bare.split_once(':').filter(|(_, v)| !v.starts_with("//")));
        if let Some((name, value)) = assigned
            && !value.is_empty()
            && !value.starts_with('$')
            && is_secret_name(name.trim_start_matches('-'))
        {
            out.push_str(&word.replacen(value, HIDDEN, 1));
            continue;
        }
        if bare.contains("://") && bare.contains('@') {
            out.push_str(&word.replacen(bare, &crate::net::redacted(bare), 1));
            continue;
        }
        out.push_str(word);
    }
    out
}

/// `word` with its bare value replaced, quotes kept.
fn hidden(word: &str, bare: &str) -> String {
    word.replacen(bare, HIDDEN, 1)
}

#[cfg(test)]
mod tests {
    use super::command;

    #[test]
    fn hides_the_forms_secrets_take_in_a_command() {
        let cases = [
            (
                "k6 run -H 'Authorization: Bearer abc.def' load.js",
                "k6 run -H 'Authorization: Bearer ***' load.js",
            ),
            (
                "autocannon -H X-Api-Key:s3cret -H 'x-api-key: s3cret' http://x",
                "autocannon -H X-Api-Key:*** -H 'x-api-key: ***' http://x",
            ),
            (
                "API_TOKEN=hunter2 node drive.mjs",
                "API_TOKEN=*** node drive.mjs",
            ),
            (
                "drive --password=hunter2 --n 3",
                "drive --password=*** --n 3",
            ),
            (
                "curl http://admin:hunter2@127.0.0.1:9/",
                "curl http://admin:***@127.0.0.1:9/",
            ),
            ("curl -H 'Cookie: sid=abc'", "curl -H 'Cookie: ***'"),
            // Nothing secret: unchanged, and an environment reference is kept.
            (
                "k6 run -e URL=$LEAKCHECK_URL -e TOKEN=$TOKEN load.js",
                "k6 run -e URL=$LEAKCHECK_URL -e TOKEN=$TOKEN load.js",
            ),
            (
                "autocannon -c 10 -a 300 http://127.0.0.1:9/x",
                "autocannon -c 10 -a 300 http://127.0.0.1:9/x",
            ),
        ];
        for (given, shown) in cases {
            assert_eq!(command(given), shown, "{given}");
        }
    }
}
