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

/// Headers whose values say nothing about the user (kept in a
/// command line shown in a report); every other `-H` value is hidden.
const PLAIN_HEADERS: [&str; 6] = [
    "accept",
    "accept-encoding",
    "accept-language",
    "cache-control",
    "content-type",
    "user-agent",
];

/// leakcheck's own arguments as they may be shown: every request body
/// (`-b`, `--body`) and every header value but the plain ones above
/// hidden as `***`, then each word through `command`'s rules.
pub fn arguments(args: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    let mut next_is = "";
    for arg in args {
        let shown = match next_is {
            "header" => header(arg),
            "body" => HIDDEN.to_string(),
            _ => {
                if let Some(value) = arg.strip_prefix("--header=") {
                    format!("--header={}", header(value))
                } else if arg.starts_with("--body=") {
                    format!("--body={HIDDEN}")
                } else {
                    command(arg)
                }
            }
        };
        next_is = match arg.as_str() {
            "-H" | "--header" => "header",
            "-b" | "--body" => "body",
            _ => "",
        };
        out.push(shown);
    }
    out
}

fn header(text: &str) -> String {
    match text.split_once(':') {
        Some((name, _)) if PLAIN_HEADERS.contains(&name.trim().to_ascii_lowercase().as_str()) => {
            text.to_string()
        }
        Some((name, _)) => format!("{name}: {HIDDEN}"),
        None => HIDDEN.to_string(),
    }
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
    use super::{arguments, command};

    #[test]
    fn header_values_and_bodies_are_hidden_in_arguments() {
        let args: Vec<String> = [
            "run",
            "-H",
            "Cookie: sid=s3cr3t",
            "--header=X-Team: blue",
            "-H",
            "Content-Type: application/json",
            "-b",
            "{\"password\":\"hunter2\"}",
            "--",
            "node",
            "server.js",
            "--token=abc",
        ]
        .map(String::from)
        .to_vec();
        let shown = arguments(&args).join(" ");
        assert_eq!(
            shown,
            "run -H Cookie: *** --header=X-Team: *** -H Content-Type: application/json -b *** \
             -- node server.js --token=***"
        );
    }

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
