//! Secret redaction: one pass over a text with one combined regex finds every credential of the
//! kinds below (plus the user's own patterns) and replaces it with `[REDACTED:kind]`.
//!
//! The combined regex only says where a secret starts and ends; the rare match is then checked
//! against the kinds' own regexes to name it and, for kinds that match context around the
//! secret (`PASSWORD=...`, `user:pass@host`, `Authorization: Bearer ...`), to replace only the
//! secret. Token kinds start after a non-word character or a JSON escape (`\n`, `\t`, `\r`:
//! tool inputs are JSON text, where a token often follows an escaped newline); quotes around a
//! value may be escaped any number of times (JSON text inside JSON text); trailing word
//! boundaries are ASCII-only so the lazy DFA keeps running on non-ASCII text.
//! A replacement never matches again, so redacting twice changes nothing.

use std::borrow::Cow;
use std::collections::BTreeMap;

use regex::{Captures, Regex};

/// The prefix of every replacement.
pub const MARKER_PREFIX: &str = "[REDACTED:";

/// A token kind's pattern: `body` after a non-word character, the start, or a JSON escape
/// (`\n`, `\t`, `\r`), ending at an ASCII word boundary; the token is the secret.
macro_rules! token {
    ($body:literal) => {
        concat!(r"(?:^|[^A-Za-z0-9_]|\\[nrt])(?P<s>", $body, r")(?-u:\b)")
    };
}

/// An optional quote, plain or JSON-escaped once or more (`\"`: tool inputs are JSON text;
/// `\\\"`: JSON text inside JSON text, issue 40).
macro_rules! quote {
    () => {
        r#"(?:\\*["'])?"#
    };
}

/// The built-in kinds, in priority order (the first that matches at a position wins). A group
/// whose name starts with `s` holds the secret when the pattern also matches context.
///
/// Which kinds matter comes from the lists of gitleaks (`config/gitleaks.toml`) and GitHub
/// secret scanning's supported patterns; the patterns are our own, from each provider's
/// documented token shape (a fixed prefix where there is one, so they rarely match anything
/// else). Every kind is planted in `crates/trail-cli/tests/data/planted-secrets.txt`.
const BUILTIN: &[(&str, &str)] = &[
    (
        "private-key",
        r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----(?:(?s:.)*?-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s\\]*)",
    ),
    (
        "age-secret-key",
        token!("AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
    ),
    (
        "aws-access-key",
        token!("(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}"),
    ),
    (
        "aws-secret-key",
        concat!(
            r"(?i:aws_?secret_?access_?key|secret_?access_?key|aws_?secret_?key)",
            quote!(),
            r"\s*[:=]\s*",
            quote!(),
            r"(?P<s>[A-Za-z0-9/+]{40})(?-u:\b)"
        ),
    ),
    (
        "github-token",
        token!("(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9_]{22,247}"),
    ),
    (
        "gitlab-token",
        token!("gl(?:pat|dt|ptt|rt|cbt|soat|ft|imt|oas|agent)-[A-Za-z0-9_\\-]{20,}"),
    ),
    (
        "anthropic-key",
        r"(?:^|[^A-Za-z0-9_]|\\[nrt])(?P<s>sk-ant-[A-Za-z0-9_\-]{20,})",
    ),
    (
        "openai-key",
        r"(?:^|[^A-Za-z0-9_]|\\[nrt])(?P<s>sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{32,})",
    ),
    ("groq-key", token!("gsk_[A-Za-z0-9]{52}")),
    ("xai-key", token!("xai-[A-Za-z0-9]{80}")),
    ("replicate-token", token!("r8_[A-Za-z0-9]{37}")),
    ("huggingface-token", token!("(?:hf_|api_org_)[A-Za-z]{34}")),
    (
        "slack-token",
        r"(?:^|[^A-Za-z0-9_]|\\[nrt])(?P<s>xox[abposre]-[A-Za-z0-9\-]{10,}|xapp-[0-9]-[A-Za-z0-9\-]{10,})|hooks\.slack\.com/services/T[A-Za-z0-9_]+/B[A-Za-z0-9_]+/[A-Za-z0-9_]+",
    ),
    (
        "discord-webhook",
        r"(?:discord|discordapp)\.com/api/webhooks/[0-9]{17,20}/(?P<s>[A-Za-z0-9_\-]{60,})",
    ),
    (
        "discord-bot-token",
        token!("[MNO][A-Za-z0-9_\\-]{23,25}\\.[A-Za-z0-9_\\-]{6}\\.[A-Za-z0-9_\\-]{27,38}"),
    ),
    (
        "telegram-bot-token",
        token!("[0-9]{8,10}:A[A-Za-z0-9_\\-]{34}"),
    ),
    (
        "google-api-key",
        r"(?:^|[^A-Za-z0-9_]|\\[nrt])(?P<s>AIza[0-9A-Za-z_\-]{35})",
    ),
    ("google-oauth-secret", token!("GOCSPX-[A-Za-z0-9_\\-]{28}")),
    (
        "stripe-key",
        token!("(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{10,}"),
    ),
    ("npm-token", token!("npm_[A-Za-z0-9]{36}")),
    (
        "npm-auth-token",
        concat!(
            r"(?:_authToken|_auth|_password)[ \t]*=[ \t]*",
            quote!(),
            r"(?P<s>[A-Za-z0-9_\-.+/=]{16,})"
        ),
    ),
    (
        "pypi-token",
        token!("pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\\-]{50,}"),
    ),
    ("docker-hub-token", token!("dckr_pat_[A-Za-z0-9_\\-]{27,}")),
    (
        "azure-storage-key",
        r"(?i:AccountKey|SharedAccessKey)=(?P<s>[A-Za-z0-9+/]{20,}={0,2})",
    ),
    (
        "azure-ad-client-secret",
        token!("[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.\\-]{31,34}"),
    ),
    (
        "sendgrid-key",
        token!("SG\\.[A-Za-z0-9_\\-]{22}\\.[A-Za-z0-9_\\-]{43}"),
    ),
    ("twilio-api-key", token!("SK[0-9a-fA-F]{32}")),
    ("mailgun-key", token!("key-[0-9a-f]{32}")),
    ("mailchimp-key", token!("[0-9a-f]{32}-us[0-9]{1,2}")),
    (
        "shopify-token",
        token!("shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"),
    ),
    (
        "square-token",
        token!("EAAA[A-Za-z0-9_\\-]{60}|sq0(?:atp|csp)-[A-Za-z0-9_\\-]{22,43}"),
    ),
    ("digitalocean-token", token!("do[opr]_v1_[a-f0-9]{64}")),
    ("databricks-token", token!("dapi[a-f0-9]{32}(?:-[0-9])?")),
    ("linear-key", token!("lin_(?:api|oauth)_[A-Za-z0-9]{40}")),
    (
        "postman-key",
        token!("PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}"),
    ),
    ("heroku-key", token!("HRKU-AA[0-9A-Za-z_\\-]{58}")),
    ("atlassian-token", token!("ATATT3[A-Za-z0-9_\\-=]{150,}")),
    (
        "doppler-token",
        token!("dp\\.(?:pt|st|sa|ct|scim|audit)\\.[A-Za-z0-9]{40,44}"),
    ),
    ("vault-token", token!("hv[sbr]\\.[A-Za-z0-9_\\-]{24,}")),
    (
        "grafana-token",
        token!("glc_[A-Za-z0-9+/]{32,400}={0,2}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}"),
    ),
    (
        "newrelic-key",
        token!("NR(?:AK|AA|II|JS)-[A-Za-z0-9]{19,32}"),
    ),
    (
        "sentry-token",
        token!("sntrys_[A-Za-z0-9+/=_]{40,}|sntryu_[a-f0-9]{64}"),
    ),
    (
        "supabase-token",
        token!("sbp_[a-f0-9]{40}|sb_secret_[A-Za-z0-9_\\-]{31,}"),
    ),
    ("pulumi-token", token!("pul-[a-f0-9]{40}")),
    (
        "terraform-token",
        token!("[A-Za-z0-9]{14}\\.atlasv1\\.[A-Za-z0-9_=\\-]{60,70}"),
    ),
    ("okta-token", r"(?i:SSWS)[ \t]+(?P<s>00[A-Za-z0-9_\-]{40})"),
    (
        "notion-token",
        token!("ntn_[A-Za-z0-9]{46}|secret_[A-Za-z0-9]{43}"),
    ),
    (
        "airtable-token",
        token!("pat[A-Za-z0-9]{14}\\.[a-f0-9]{64}"),
    ),
    (
        "planetscale-token",
        token!("pscale_(?:tkn|oauth|pw)_[A-Za-z0-9_\\-=.]{32,64}"),
    ),
    (
        "jwt",
        r"(?:^|[^A-Za-z0-9_]|\\[nrt])(?P<s>eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,})",
    ),
    (
        "bearer-token",
        r"(?:^|[^A-Za-z0-9_]|\\[nrt])(?i:bearer)[ \t]+(?P<s>[A-Za-z0-9._~+/=\-]{16,})",
    ),
    (
        "basic-auth",
        r"(?i:authorization)(?:\\*[\x22'])?\s*[:=]\s*(?:\\*[\x22'])?(?i:basic)[ \t]+(?P<s>[A-Za-z0-9+/=]{8,})",
    ),
    (
        "url-password",
        r#"[A-Za-z][A-Za-z0-9+.\-]{1,20}://[^\s:/@\[\]"'<>\\]{1,128}:(?P<s>[^\s:/@\[\]"'<>\\]{1,256})@"#,
    ),
    (
        "env-secret",
        r#"(?:[A-Z][A-Z0-9_]{0,60})?(?:_SECRET|_TOKEN|_PASSWORD|_PASSWD|_API_KEY|_SECRET_KEY|_PRIVATE_KEY|PASSWORD|SECRET)(?-u:\b)[ \t]*=[ \t]*(?:\\+"(?P<s4>[^"\\\s\[$][^"\\\n]*)\\+"|"(?P<s1>[^"\s\[$][^"\n]*)"|'(?P<s2>[^'\s\[$][^'\n]*)'|(?P<s3>[^\s"'\\\[$][^\s"'\\]*))"#,
    ),
    (
        "client-secret",
        concat!(
            r"(?i:client_?secret|api_?secret|secret_?key)",
            quote!(),
            r"[ \t]*[:=][ \t]*",
            quote!(),
            r"(?P<s>[A-Za-z0-9_\-.+/=~]{16,})"
        ),
    ),
];

/// Errors building a redactor.
#[derive(Debug, thiserror::Error)]
pub enum RedactError {
    /// A user pattern is not a valid regular expression.
    #[error("invalid redaction pattern {pattern:?}: {source}")]
    Pattern {
        pattern: String,
        #[source]
        source: Box<regex::Error>,
    },
}

/// How many values were redacted, by kind.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct RedactionCounts(pub BTreeMap<String, u64>);

impl RedactionCounts {
    /// Returns the number of values redacted.
    pub fn total(&self) -> u64 {
        self.0.values().sum()
    }

    /// Adds `other` into `self`.
    pub fn add(&mut self, other: &RedactionCounts) {
        for (k, n) in &other.0 {
            *self.0.entry(k.clone()).or_default() += n;
        }
    }

    fn bump(&mut self, kind: &str) {
        match self.0.get_mut(kind) {
            Some(n) => *n += 1,
            None => {
                self.0.insert(kind.to_string(), 1);
            }
        }
    }
}

struct Kind {
    name: String,
    /// The kind's pattern anchored at both ends, to name a combined match.
    anchored: Regex,
}

/// Finds and replaces secrets. Build once, use for every text.
pub struct Redactor {
    /// `None` when redaction is off.
    combined: Option<Regex>,
    kinds: Vec<Kind>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redactor")
            .field("enabled", &self.combined.is_some())
            .field("kinds", &self.kinds.len())
            .finish()
    }
}

impl Redactor {
    /// Returns a redactor for the built-in kinds plus `extra` user patterns (each a regex; a
    /// named group starting with `s` marks the part to replace, else the whole match is).
    /// User patterns are reported as kind `custom`.
    pub fn new(extra: &[String]) -> Result<Redactor, RedactError> {
        let mut sources: Vec<(String, String)> = BUILTIN
            .iter()
            .map(|(k, p)| (k.to_string(), p.to_string()))
            .collect();
        for p in extra {
            Regex::new(p).map_err(|e| RedactError::Pattern {
                pattern: p.clone(),
                source: Box::new(e),
            })?;
            sources.push(("custom".to_string(), p.clone()));
        }
        let mut kinds = Vec::with_capacity(sources.len());
        let mut alternation = String::new();
        for (i, (name, pattern)) in sources.iter().enumerate() {
            let anchored =
                Regex::new(&format!("^(?:{pattern})$")).map_err(|e| RedactError::Pattern {
                    pattern: pattern.clone(),
                    source: Box::new(e),
                })?;
            kinds.push(Kind {
                name: name.clone(),
                anchored,
            });
            if i > 0 {
                alternation.push('|');
            }
            // Group names must be unique in the combined regex: drop them there.
            alternation.push_str("(?:");
            alternation.push_str(&strip_group_names(pattern));
            alternation.push(')');
        }
        let combined = regex::RegexBuilder::new(&alternation)
            .size_limit(64 << 20)
            .dfa_size_limit(64 << 20)
            .build()
            .map_err(|e| RedactError::Pattern {
                pattern: alternation.clone(),
                source: Box::new(e),
            })?;
        Ok(Redactor {
            combined: Some(combined),
            kinds,
        })
    }

    /// Returns a redactor that changes nothing (`--no-redact`).
    pub fn disabled() -> Redactor {
        Redactor {
            combined: None,
            kinds: Vec::new(),
        }
    }

    /// Returns whether redaction is on.
    pub fn enabled(&self) -> bool {
        self.combined.is_some()
    }

    /// Returns `text` with every secret replaced by `[REDACTED:kind]`, counting them.
    /// Borrows when nothing is found (the common case).
    ///
    /// Passes repeat until nothing changes: a secret can start right where another ended
    /// (`...PRIVATE KEY-----xoxb-...`), and most patterns need a non-word character before the
    /// secret, which the first secret consumed. Its marker ends with `]`, so the next pass
    /// finds the second one; redacting the output again then changes nothing.
    pub fn redact<'a>(&self, text: &'a str, counts: &mut RedactionCounts) -> Cow<'a, str> {
        let Cow::Owned(mut current) = self.redact_once(text, counts) else {
            return Cow::Borrowed(text);
        };
        // A user pattern could match inside a marker forever; a few passes are plenty.
        for _ in 0..MAX_PASSES {
            match self.redact_once(&current, counts) {
                Cow::Borrowed(_) => break,
                Cow::Owned(next) => current = next,
            }
        }
        Cow::Owned(current)
    }

    fn redact_once<'a>(&self, text: &'a str, counts: &mut RedactionCounts) -> Cow<'a, str> {
        let Some(combined) = &self.combined else {
            return Cow::Borrowed(text);
        };
        let mut out: Option<String> = None;
        let mut last = 0;
        let mut pos = 0;
        while let Some(m) = combined.find_at(text, pos) {
            // Where the next search starts: after the match, or right after the secret when a
            // match with context (`user:secret@host`) ends past it, so the rest is scanned too.
            pos = next_boundary(text, m.end().max(m.start() + 1));
            let found = m.as_str();
            let Some((kind, caps)) = self
                .kinds
                .iter()
                .find_map(|k| k.anchored.captures(found).map(|c| (k, c)))
            else {
                continue;
            };
            let (start, end) = secret_span(&kind.anchored, &caps);
            let secret = &found[start..end];
            if secret.is_empty() || secret.starts_with(MARKER_PREFIX) {
                continue;
            }
            let buf = out.get_or_insert_with(|| String::with_capacity(text.len()));
            buf.push_str(&text[last..m.start() + start]);
            buf.push_str(MARKER_PREFIX);
            buf.push_str(&kind.name);
            buf.push(']');
            last = m.start() + end;
            pos = last;
            counts.bump(&kind.name);
        }
        match out {
            None => Cow::Borrowed(text),
            Some(mut buf) => {
                buf.push_str(&text[last..]);
                Cow::Owned(buf)
            }
        }
    }
}

/// Redaction passes after the first, at most.
const MAX_PASSES: usize = 8;

/// Returns the first char boundary of `text` at or after `i` (or its length).
fn next_boundary(text: &str, mut i: usize) -> usize {
    while i < text.len() && !text.is_char_boundary(i) {
        i += 1;
    }
    i.min(text.len())
}

/// Returns the span of the secret inside a kind's match: its first participating group named
/// `s...`, else the whole match.
fn secret_span(re: &Regex, caps: &Captures<'_>) -> (usize, usize) {
    for (i, name) in re.capture_names().enumerate() {
        if name.is_some_and(|n| n.starts_with('s')) {
            if let Some(g) = caps.get(i) {
                return (g.start(), g.end());
            }
        }
    }
    let m = caps.get(0).expect("group 0 always participates");
    (m.start(), m.end())
}

/// Turns `(?P<name>` and `(?<name>` into `(?:` (names must be unique in one regex).
fn strip_group_names(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    let bytes = pattern.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' {
            // Copy an escape and the character it escapes.
            let next = pattern[i + 1..].chars().next().map_or(0, char::len_utf8);
            out.push_str(&pattern[i..i + 1 + next]);
            i += 1 + next;
            continue;
        }
        let rest = &pattern[i..];
        let open = if rest.starts_with("(?P<") {
            Some(4)
        } else if rest.starts_with("(?<") {
            Some(3)
        } else {
            None
        };
        if let Some(skip) = open {
            if let Some(close) = rest[skip..].find('>') {
                out.push_str("(?:");
                i += skip + close + 1;
                continue;
            }
        }
        let c = rest.chars().next().expect("i < len");
        out.push(c);
        i += c.len_utf8();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redact(s: &str) -> (String, RedactionCounts) {
        let r = Redactor::new(&[]).unwrap();
        let mut c = RedactionCounts::default();
        let out = r.redact(s, &mut c).into_owned();
        (out, c)
    }

    /// Found by the `redaction_is_idempotent` proptest: a secret right after a URL password
    /// was inside the URL match and escaped the first pass.
    #[test]
    fn a_secret_right_after_another_is_redacted() {
        let (out, counts) = redact(
            "-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----xoxb-1234567890-abcdef",
        );
        assert_eq!(out, "[REDACTED:private-key][REDACTED:slack-token]");
        assert_eq!(counts.total(), 2);
        assert_eq!(redact(&out).0, out);
    }

    #[test]
    fn the_rest_of_a_context_match_is_scanned_too() {
        let key = format!("AIza{}", "sk_live_AKIAAKIAgithub_pat_AKIA-----");
        let (out, c) = redact(&format!("https://u:hunter2@{key}END"));
        assert_eq!(
            out,
            "https://u:[REDACTED:url-password]@[REDACTED:google-api-key]-END"
        );
        assert_eq!(c.total(), 2);
        assert_eq!(redact(&out).0, out, "a second pass changes nothing");
    }

    #[test]
    fn replaces_only_the_secret_part() {
        let (out, c) = redact("DB_PASSWORD=hunter2hunter2 and https://bob:s3cr3t@example.com/x");
        assert_eq!(
            out,
            "DB_PASSWORD=[REDACTED:env-secret] and https://bob:[REDACTED:url-password]@example.com/x"
        );
        assert_eq!(c.total(), 2);
        let (out, _) = redact("curl -H 'Authorization: Bearer abcdefghijklmnop1234'");
        assert_eq!(
            out,
            "curl -H 'Authorization: Bearer [REDACTED:bearer-token]'"
        );
        let (out, _) = redact(r#"API_TOKEN="abc def""#);
        assert_eq!(out, r#"API_TOKEN="[REDACTED:env-secret]""#);
    }

    #[test]
    fn leaves_look_alikes() {
        for s in [
            "commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
            "id 123e4567-e89b-12d3-a456-426614174000",
            "API_TOKEN=$GITHUB_TOKEN",
            "TOKEN_COUNT = 5 maybe",
            "skip-navigation sk-short",
            "from huggingface_hub import hf_hub_download",
            "SG.example and npm_config_cache",
            "dapi-version: 2 and pul-request",
            "secret_santa_list and key-value store",
            "glpat- followed by nothing",
        ] {
            assert_eq!(redact(s).0, s);
        }
    }

    /// Issue 15: tool inputs are JSON text, where quotes are escaped (`\"`) and newlines are
    /// `\n`; the JSON export must redact there what the Markdown export redacts elsewhere.
    #[test]
    fn redacts_inside_json_text_and_keeps_it_valid() {
        let value = serde_json::json!({
            "command": "export API_TOKEN=\"abc def ghi\"\naws_secret_access_key = \"wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY01\"\n//registry.npmjs.org/:_authToken=00000000-1111-2222-3333-444444444444",
        });
        let json = value.to_string();
        let (out, counts) = redact(&json);
        assert!(!out.contains("abc def"), "{out}");
        assert!(!out.contains("EXAMPLEKEY01"), "{out}");
        assert!(!out.contains("444444444444"), "{out}");
        assert_eq!(counts.total(), 3, "{out}");
        let back: serde_json::Value = serde_json::from_str(&out).expect("still JSON");
        assert!(back["command"]
            .as_str()
            .unwrap()
            .contains("[REDACTED:aws-secret-key]"));
    }

    /// One planted secret of `crates/trail-cli/tests/data/planted-secrets.txt` (every kind is
    /// planted there): its kind, the text it appears in, the secret.
    fn planted() -> Vec<(String, String, String)> {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../trail-cli/tests/data/planted-secrets.txt"
        );
        let data = std::fs::read_to_string(path).unwrap();
        data.split("\n== ")
            .skip(1)
            .map(|record| {
                let (kind, rest) = record.split_once('\n').unwrap();
                let (text, secret) = rest.split_once("\n-- SECRET\n").unwrap();
                let kind = kind.trim().trim_end_matches("-quoted").to_string();
                (kind, text.to_string(), secret.trim_end().to_string())
            })
            .collect()
    }

    /// The ways a text reaches the redactor as JSON: a tool input or output stored as JSON
    /// text, the secret right after an escaped line break (`contents:\naws_secret_access_key`,
    /// issue 40), a tab, a CRLF, an escaped quote, and JSON text inside JSON text.
    fn json_contexts(text: &str) -> Vec<(&'static str, String)> {
        let j = |v: serde_json::Value| v.to_string();
        vec![
            (
                "after \\n",
                j(serde_json::json!({ "output": format!("contents:\n{text}\n") })),
            ),
            (
                "tool input",
                j(serde_json::json!({ "command": format!("cat <<EOF\n{text}\nEOF") })),
            ),
            (
                "after \\t",
                j(serde_json::json!({ "line": format!("1\t{text}\tx") })),
            ),
            (
                "after \\r\\n",
                j(serde_json::json!({ "output": format!("a:\r\n{text}\r\n") })),
            ),
            (
                "quoted",
                j(serde_json::json!({ "s": format!("\"{text}\"") })),
            ),
            (
                "JSON in JSON",
                j(
                    serde_json::json!({ "output": j(serde_json::json!({ "file": format!("contents:\n{text}\n") })) }),
                ),
            ),
        ]
    }

    /// Redacts every planted secret of `kinds` in every JSON context; returns what leaked.
    fn json_leaks(kinds: &[&str]) -> Vec<String> {
        let planted = planted();
        let redactor = Redactor::new(&[]).unwrap();
        let redact = |s: &str| {
            let mut c = RedactionCounts::default();
            let out = redactor.redact(s, &mut c).into_owned();
            (out, c)
        };
        let mut leaks = Vec::new();
        for kind in kinds {
            let mine: Vec<_> = planted
                .iter()
                .filter(|p| builtin_kind(&p.0) == *kind)
                .collect();
            assert!(!mine.is_empty(), "no planted {kind}");
            for (_, text, secret) in mine {
                for (context, json) in json_contexts(text) {
                    let (out, counts) = redact(&json);
                    let parts = secret
                        .lines()
                        .filter(|l| l.len() >= 12 && !l.starts_with("-----"));
                    // A secret inside JSON text is escaped there too (a PEM's line breaks).
                    let escaped = |p: &str| {
                        serde_json::to_string(p)
                            .unwrap()
                            .trim_matches('"')
                            .to_string()
                    };
                    if parts
                        .clone()
                        .any(|p| out.contains(&escaped(p)) || out.contains(p))
                        || counts.total() == 0
                    {
                        leaks.push(format!("{kind} {context}: {out}"));
                    }
                    assert!(
                        serde_json::from_str::<serde_json::Value>(&out).is_ok(),
                        "{kind} {context}: not JSON: {out}"
                    );
                }
            }
        }
        leaks
    }

    /// The built-in kind a planted record's label names (some labels name a variant).
    fn builtin_kind(label: &str) -> &str {
        match label {
            "github-fine-grained" => "github-token",
            "grafana-cloud-token" | "grafana-service-account-token" => "grafana-token",
            "npmrc-auth-token" => "npm-auth-token",
            "slack-app-token" | "slack-webhook" => "slack-token",
            other => other,
        }
    }

    /// Issue 40: every built-in kind is in exactly one family below, so each is checked
    /// against JSON-escaped text.
    #[test]
    fn every_kind_has_a_json_family() {
        let families: Vec<&str> = [PEM, PREFIXED, KEY_VALUE, HEADERS, URLS].concat();
        for (kind, _) in BUILTIN {
            let n = families.iter().filter(|k| *k == kind).count();
            assert_eq!(n, 1, "{kind} is in {n} families");
        }
        assert_eq!(families.len(), BUILTIN.len());
    }

    const PEM: &[&str] = &["private-key"];
    const PREFIXED: &[&str] = &[
        "age-secret-key",
        "aws-access-key",
        "github-token",
        "gitlab-token",
        "anthropic-key",
        "openai-key",
        "groq-key",
        "xai-key",
        "replicate-token",
        "huggingface-token",
        "slack-token",
        "discord-bot-token",
        "telegram-bot-token",
        "google-api-key",
        "google-oauth-secret",
        "stripe-key",
        "npm-token",
        "pypi-token",
        "docker-hub-token",
        "azure-ad-client-secret",
        "sendgrid-key",
        "twilio-api-key",
        "mailgun-key",
        "mailchimp-key",
        "shopify-token",
        "square-token",
        "digitalocean-token",
        "databricks-token",
        "linear-key",
        "postman-key",
        "heroku-key",
        "atlassian-token",
        "doppler-token",
        "vault-token",
        "grafana-token",
        "newrelic-key",
        "sentry-token",
        "supabase-token",
        "pulumi-token",
        "terraform-token",
        "notion-token",
        "airtable-token",
        "planetscale-token",
        "jwt",
    ];
    const KEY_VALUE: &[&str] = &[
        "aws-secret-key",
        "npm-auth-token",
        "azure-storage-key",
        "okta-token",
        "env-secret",
        "client-secret",
    ];
    const HEADERS: &[&str] = &["bearer-token", "basic-auth"];
    const URLS: &[&str] = &["url-password", "discord-webhook"];

    #[test]
    fn json_escaped_private_keys_are_redacted() {
        let leaks = json_leaks(PEM);
        assert!(leaks.is_empty(), "{}", leaks.join("\n"));
    }

    #[test]
    fn json_escaped_prefixed_tokens_are_redacted() {
        let leaks = json_leaks(PREFIXED);
        assert!(leaks.is_empty(), "{}", leaks.join("\n"));
    }

    /// Issue 40: `contents:\naws_secret_access_key = ...` leaked from `export --format json`.
    #[test]
    fn json_escaped_key_value_secrets_are_redacted() {
        let leaks = json_leaks(KEY_VALUE);
        assert!(leaks.is_empty(), "{}", leaks.join("\n"));
    }

    #[test]
    fn json_escaped_authorization_headers_are_redacted() {
        let leaks = json_leaks(HEADERS);
        assert!(leaks.is_empty(), "{}", leaks.join("\n"));
    }

    #[test]
    fn json_escaped_url_credentials_are_redacted() {
        let leaks = json_leaks(URLS);
        assert!(leaks.is_empty(), "{}", leaks.join("\n"));
    }

    #[test]
    fn strips_group_names() {
        assert_eq!(strip_group_names(r"a(?P<s>b)\(?P<x>"), r"a(?:b)\(?P<x>");
    }

    #[test]
    fn user_patterns() {
        let r = Redactor::new(&[r"corp-[0-9]{6}".to_string()]).unwrap();
        let mut c = RedactionCounts::default();
        assert_eq!(r.redact("id corp-123456.", &mut c), "id [REDACTED:custom].");
        assert!(Redactor::new(&["(".to_string()]).is_err());
    }
}
